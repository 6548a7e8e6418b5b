/*
 * forkless.h: start programs on Linux at a cost that does not grow with the
 * caller's memory, with exact errors and a clean child.
 *
 * The calling protocol:
 *
 *   1. Fill a struct fl_cmd. All-zero fields mean the defaults, so C99
 *      designated initialisers make the common case one statement:
 *
 *          struct fl_cmd cmd = {
 *              .argv  = (char *const[]){ "grep", "-c", "x", NULL },
 *              .cwd   = "/tmp",
 *              .stdio = { [1] = { .kind = FL_PIPE }, [2] = { .kind = FL_TO_STDOUT } },
 *          };
 *
 *   2. fl_spawn() prepares everything that may allocate in the parent, then
 *      starts the child. It returns 0, or an errno value and a struct
 *      fl_error that names the step that failed (chdir, open, exec, ...).
 *      A program that cannot be executed is an error of fl_spawn(), never
 *      "spawned, then exited with 127".
 *
 *   3. Own the process through its struct fl_proc: read or write the pipe
 *      ends in proc.stdio[], then fl_wait() (with an optional timeout),
 *      fl_kill() if needed, and finally fl_close().
 *
 * The common cases in one call each: fl_run() (a system() without a
 * shell, with capture, input, a deadline and a stop policy),
 * fl_pipeline_run() (a | b | c), fl_communicate() (the exchange with a
 * process already started). The source tree's examples/ holds complete
 * programs for them (system, popen, a pipeline, a job runner launching
 * with FL_NO_WAIT_EXEC, a sandbox), and libforkless(3) is the overview.
 *
 * A function that acts returns 0 or a positive errno value (those that
 * only answer, such as fl_syscall_number() or fl_pipefail(), say what they
 * return); none sets errno as its result, none prints, and none calls
 * exit().
 *
 * The header is C99 (or C++11) and uses POSIX types (sigset_t, struct
 * rusage): a program built in a strict ISO mode (-std=c11, CMake's
 * C_EXTENSIONS OFF) defines _POSIX_C_SOURCE to 200809L or more (or
 * _GNU_SOURCE) before its first #include; the default GNU modes need
 * nothing. On a 32-bit glibc the library is built with 64-bit rlim_t
 * and time_t (struct fl_rlimit and struct fl_result hold them), and so
 * must be its callers: -D_FILE_OFFSET_BITS=64 -D_TIME_BITS=64, which
 * pkg-config's --cflags give there; without them the header stops the
 * build rather than let the two disagree on a struct's layout.
 *
 * ABI: struct fl_cmd is a plain caller-owned struct rather than an opaque
 * builder, because a struct is free to set up, needs no error handling of
 * its own and reads well as a designated initialiser. It ends in reserved
 * space: later versions add fields only there, and give each new field a
 * meaning in which zero is the old behaviour, so a program built against
 * this header keeps working with a newer library.
 *
 * From 0.2.0 on, that promise holds for every 0.x release: the library is
 * libforkless.so.0 (SONAME), it exports only the fl_ functions declared
 * here (symbol version FORKLESS_0.2, src/libforkless.map), and CI compares
 * each build with the 0.2.0 baseline in abi/ (abidiff): a removed function,
 * a changed signature, a struct that changes size or moves a field, or a
 * renumbered enum value fails the build. New functions, new enum values
 * and new fields in reserved space are compatible additions. 0.1.0 came
 * before this promise: a program built against it must be rebuilt
 * (CHANGELOG.md says which structs grew).
 */
#ifndef FORKLESS_H
#define FORKLESS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#if defined(__GLIBC__) && defined(__RLIM_T_MATCHES_RLIM64_T)
#if !__RLIM_T_MATCHES_RLIM64_T && !defined(__USE_FILE_OFFSET64)
#error "forkless.h: on a 32-bit glibc, build with -D_FILE_OFFSET_BITS=64 -D_TIME_BITS=64, as libforkless is (pkg-config --cflags forkless)"
#endif
#if defined(__TIMESIZE) && __TIMESIZE != 64 && __GLIBC_PREREQ(2, 34) && !defined(__USE_TIME_BITS64)
#error "forkless.h: on a 32-bit glibc, build with -D_TIME_BITS=64 too, as libforkless is (pkg-config --cflags forkless)"
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(FL_BUILDING_LIBRARY)
#define FL_API __attribute__((visibility("default")))
#else
#define FL_API
#endif

/* The version of this header; the build checks that CMakeLists.txt's
 * project version is the same. fl_version() says which library a program
 * runs with. */
#define FL_VERSION_MAJOR 0
#define FL_VERSION_MINOR 2
#define FL_VERSION_PATCH 0
#define FL_VERSION_STRING "0.2.0"

/* The version of the library that is running, as FL_VERSION_STRING was
 * when it was built: "0.2.0". It may be newer than the header a program
 * was built with (the same SONAME, libforkless.so.0). A static string,
 * never NULL. Thread-safe and async-signal-safe. */
FL_API const char *fl_version(void);

/* ------------------------------------------------------------------------ */
/* Describing a command                                                     */
/* ------------------------------------------------------------------------ */

/* How the child starts. FL_BACKEND_AUTO is the default. */
enum fl_backend {
    /* clone(CLONE_VM|CLONE_VFORK) on Linux: flat cost, every option. */
    FL_BACKEND_AUTO = 0,
    /* The same child, asked for by name. */
    FL_BACKEND_CLONE,
    /* The libc's posix_spawn(). Returns ENOTSUP for an option it cannot
     * express (rlimits, umask, credentials, pdeathsig, cgroup,
     * FL_RETRY_ETXTBSY, .sigignore): it never drops a setting silently.
     * The PATH candidate is picked in the parent, as fl_resolve() picks
     * it (a script whose #! interpreter cannot run, followed through
     * interpreters that are scripts as exec follows them, is passed over,
     * as is a program whose ELF loader is missing (one built for musl on
     * a glibc system, say), as exec's ENOENT has execvp() pass over it;
     * one whose #! line the kernel will not read ends the search with
     * ENOEXEC, and one whose interpreter's lookup fails otherwise, with
     * that error, ELOOP say, as exec would; a script the caller may
     * execute but not read is taken as runnable, its #! line unseen),
     * so the file actions run once (an O_EXCL file, a FIFO), and a
     * search that finds nothing starts nothing: its error is the one
     * reported, even where a step before the exec would have failed too
     * (a file to open, a group to join), which the other backends'
     * child, which opens and joins before it searches, reports instead.
     * Only FL_SHELL_FALLBACK, when exec refuses the format, runs the file
     * actions a second time, for /bin/sh. posix_spawn() does not say which step failed:
     * a failure is blamed on chdir when the cwd gives that very error,
     * on exec when the error is one exec gives and no step before it
     * could have failed (no file to open but /dev/null), on the clone
     * step for EPERM when a seccomp filter refuses the clone3() that
     * glibc's posix_spawn (2.34+) makes the process with (older
     * container profiles do; glibc falls back only on ENOSYS, the clone
     * and fork backends always), and otherwise carries FL_STEP_SPAWN.
     * Fds left open at or above RLIMIT_NOFILE
     * (the limit lowered after they were opened) cannot be closed by
     * posix_spawn: such a spawn is refused with ENOTSUP.
     * glibc's posix_spawn() sets signals 32 and 33 (its own SIGCANCEL
     * and SIGSETXID) to SIG_IGN in the child unless told to reset them:
     * by default this backend tells it to; with FL_KEEP_SIGNALS they stay
     * ignored unless .sigdefault names them. Nor can they be blocked in
     * the child: glibc's child sets the mask without them, whatever
     * .sigmask (or, with FL_KEEP_SIGNALS, the caller's mask) says.
     * Closing the other fds needs posix_spawn_file_actions_addclosefrom_np
     * (glibc 2.34 and later); with musl or an older glibc, a command
     * without FL_KEEP_FDS is refused with ENOTSUP (see docs/musl.md). */
    FL_BACKEND_POSIX_SPAWN,
    /* A copy of the process, as fork() makes (clone() without CLONE_VM,
     * with CLONE_PIDFD; no atfork handler runs), the same child code, and
     * a CLOEXEC error pipe for the child's error. CLONE_VFORK holds the
     * calling thread until the child has exec'd or exited, as the clone
     * backend's does: the pipe is then read for what is in it, not to
     * its end, which a fork() made meanwhile by another thread (a copy of
     * the write end) could hold off. Its cost grows with the parent's
     * memory; it is there for comparison and for systems where CLONE_VM
     * does not share memory (QEMU user mode, WSL1). It needs two free fds
     * for the pipe. */
    FL_BACKEND_FORK,
};

/* What a standard stream (fd 0, 1 or 2) of the child is. */
enum fl_stdio_kind {
    FL_INHERIT = 0,  /* the parent's own fd of the same number (default) */
    FL_NULL,         /* /dev/null, opened O_RDONLY for 0 and O_WRONLY else */
    FL_PIPE,         /* a new pipe; the parent's end goes to proc.stdio[n] */
    FL_FILE,         /* .path opened with .flags and .mode in the child */
    FL_FD,           /* the parent's open fd .fd */
    FL_TO_STDOUT,    /* whatever the child's fd 1 is (for fd 2 only); with
                      * fd 1 inherited, the caller's must be open (EBADF) */
    /* The terminal side of a new pseudo-terminal (see "Terminals" below):
     * every fd of 0-2 with FL_PTY gets the same one, and its master side
     * goes to proc.pty. The child becomes a session leader (setsid) with
     * the terminal as its controlling terminal. Not with FL_JOIN_PGROUP
     * or FL_SETCTTY (EINVAL); not with the posix_spawn backend (ENOTSUP). */
    FL_PTY,
};

struct fl_stdio {
    enum fl_stdio_kind kind;
    /* FL_FD: the parent's fd. */
    int fd;
    /* FL_FILE: the path, opened after the chdir to .cwd, so a relative path
     * is relative to the child's working directory. An absolute
     * /dev/fd/N, /proc/self/fd/N or /proc/thread-self/fd/N with N > 2 (a
     * shell's process substitution hands out /dev/fd/63) reopens the
     * caller's fd N: the child keeps it until the open, and closes it after
     * unless FL_KEEP_FDS. N not open in the caller is ENOENT at step open,
     * found before the spawn, as open(2) would say it (under a .chroot,
     * where the name is the new root's, the child's open answers). Other
     * names for the same file (a symlink, "/dev/./fd/N", a relative path)
     * are not recognised, and whether they still reach the caller's fd
     * depends on the backend: the posix_spawn backend opens before it
     * closes the caller's other fds, the clone backend after (but for
     * those below the highest fd the command sets), and the fork backend
     * and a launch after. Name the fd as above, or pass it with FL_FD. The
     * same goes for a .cwd named through a caller's fd. The open makes
     * a new open file description, as open(2) of that name does; to share
     * the caller's, use FL_FD. */
    const char *path;
    /* FL_FILE: open(2) flags. 0 means O_RDONLY for fd 0 and
     * O_WRONLY|O_CREAT|O_TRUNC for fds 1 and 2. O_CLOEXEC is ignored. */
    int flags;
    /* FL_FILE: the mode for O_CREAT; 0 means 0666 (before the umask). */
    mode_t mode;
};

/* One extra fd for the child: its number .child_fd (>= 0) is made a
 * duplicate of the parent's open fd .parent_fd, without FD_CLOEXEC. Maps are
 * applied as if at once: cycles (3<-4 with 4<-3), a parent fd used twice,
 * and a parent fd equal to its own child number (passed as itself, even
 * when FD_CLOEXEC in the parent) all work. A map for child fd 0, 1 or 2
 * overrides .stdio for that fd, which is then neither made nor checked. */
struct fl_fd_map {
    int child_fd;
    int parent_fd;
};

/* One resource limit set in the child with prlimit(2). */
struct fl_rlimit {
    int resource;    /* RLIMIT_NOFILE, RLIMIT_CORE, ... */
    rlim_t soft;
    rlim_t hard;
};

/* Flags for fl_cmd.flags. Unknown bits are rejected with EINVAL. */
enum fl_flags {
    /* Leave every inherited fd open (only FD_CLOEXEC ones close at exec).
     * The default closes all but 0-2 and the mapped fds, with close_range()
     * or, where that is denied, a walk of /proc/self/fd (opened before a
     * .chroot, whose root need not have /proc; without /proc at all:
     * ENOENT at step close_fds, .index 1, .path "/proc/self/fd"). So a
     * program named through a caller's fd (/dev/fd/N, a shell's <(...))
     * needs a map of N to itself: without one, exec says ENOENT, and the
     * detail says why. */
    FL_KEEP_FDS       = 1u << 0,
    /* Keep the signal dispositions that exec keeps (SIG_IGN) and the
     * calling thread's signal mask. The default resets every disposition to
     * SIG_DFL, SIGPIPE included, and empties the mask. Handlers never run
     * in the child either way.
     * By default the clone backend's child reads which of signals 1-31
     * the process ignores from its stat in /proc (the library's fd, see
     * fl_spawn()) and resets those: exact while the process has one
     * thread, as that thread sleeps until the child has exec'd (a process
     * that shares its dispositions without being a thread, made with
     * clone(CLONE_SIGHAND) and no CLONE_THREAD, escapes the count: if it
     * changes one during a spawn, the child may keep a SIG_IGN; and a
     * process that shares the caller's memory without being a thread, a
     * vfork() child or one of clone(CLONE_VM), must not spawn at all, nor
     * wait for, finish or close a handle of the caller's: the library's
     * records (of its fd, of a launch) are the caller's, so its child may
     * keep the SIG_IGNs the caller had, the caller loses track of its fd,
     * and a launch's record is freed under the caller).
     * With other
     * threads (with glibc: once a second thread was ever made; elsewhere
     * /proc counts them before the clone; a thread made behind the libc's
     * back, by a raw clone(), counts only while it lives, so one that
     * changes a disposition and ends during a spawn may leave a SIG_IGN),
     * without /proc, for a launch (FL_NO_WAIT_EXEC) and with the other
     * backends, it sets all of 1-31 to SIG_DFL one by one, which is exact
     * whatever other threads do meanwhile.
     * The real-time signals the process ignores are asked once, at its
     * first spawn (a fork()'s child asks again, at its own): a real-time
     * signal first set to SIG_IGN after that stays ignored in children
     * unless .sigdefault names it. With
     * FL_KEEP_SIGNALS the clone backend has nothing to do (clone3 clears
     * the handlers); the fork backend and the clone() fallback ask each
     * signal for a handler to reset. */
    FL_KEEP_SIGNALS   = 1u << 1,
    FL_SETSID         = 1u << 2,  /* setsid(): new session and group */
    FL_NEW_PGROUP     = 1u << 3,  /* setpgid(0, 0): new process group */
    FL_JOIN_PGROUP    = 1u << 4,  /* setpgid(0, .pgid): join a group */
    FL_SET_UMASK      = 1u << 5,  /* umask(.umask) */
    /* FL_SET_UID: setresuid(.uid, .uid, .uid); FL_SET_GID:
     * setresgid(.gid, .gid, .gid). With the clone backend the child
     * changes them on the caller's address space (CLONE_VM), and the
     * kernel then marks that address space, the caller's, not dumpable
     * (PR_GET_DUMPABLE 0, with fs.suid_dumpable 0), which is what keeps
     * the child's new user out of the caller's memory. The library puts
     * back the caller's setting once every such child of the process,
     * any thread's, has exec'd or failed: a spawn's by the time fl_spawn()
     * returns, a launch's (FL_NO_WAIT_EXEC) when it is finished
     * (fl_launch_finish(), or the first wait or fl_close(); for one that
     * fl_close() set aside, stopped, at the first spawn after its exec,
     * see fl_launch_finish()). Until then
     * the caller is not dumpable (no core, no ptrace attach by a non-root
     * user, /proc files owned by root); a launch never finished leaves it
     * so. The setting is per process: a PR_SET_DUMPABLE of the caller's
     * own meanwhile is undone, and a fork() made meanwhile keeps 0. */
    FL_SET_UID        = 1u << 6,
    FL_SET_GID        = 1u << 7,
    FL_SET_GROUPS     = 1u << 8,  /* setgroups(.ngroups, .groups) */
    /* Start from an empty environment instead of .env or environ. */
    FL_ENV_CLEAR      = 1u << 9,
    /* A file that exec refuses with ENOEXEC (no #! line, or one the
     * kernel will not read: "#!" and no name, or a name that does not end
     * within the file's first 255 bytes) is run with /bin/sh, as execvp()
     * does. Off by default: such a file is an error, whose detail says
     * which. */
    FL_SHELL_FALLBACK = 1u << 10,
    /* Fail with ENOTSUP instead of using a backend whose cost grows with the
     * parent's memory (FL_BACKEND_FORK). */
    FL_NO_FORK        = 1u << 11,
    /* Search empty and relative PATH entries too ("", ".", "bin"). They
     * name directories relative to the child's cwd; by default they are
     * skipped, so a planted ./true never runs by accident. */
    FL_PATH_RELATIVE  = 1u << 12,
    /* When exec fails with ETXTBSY, wait 1, 2, 4, ... 512 ms and try
     * again, ten times at most (about one second in all), then report
     * ETXTBSY. A program file that is open for writing cannot run. A file
     * this process has just written and closed can still be held: a child
     * that another thread started with fork() or posix_spawn() (or with
     * FL_KEEP_FDS) keeps its O_CLOEXEC copy of the write fd until its exec,
     * a rare window but a real one in build tools that write, then run.
     * Before the first pause the child closes its own FD_CLOEXEC fds, as
     * exec would, so it does not wait on its own copy (it lists them in
     * /proc/self/fd: without /proc, an FL_KEEP_FDS child can still hold
     * one). The calling thread waits while the child retries; with the
     * clone and fork backends, signals to it wait too. Not with the posix_spawn
     * backend (ENOTSUP): it would run the file actions again. */
    FL_RETRY_ETXTBSY  = 1u << 13,
    /* Make no pidfd for the process: proc.pidfd stays -1, and a running
     * child costs no fd of the caller's (with FL_PIPE streams, only their
     * pipe ends). A build tool that keeps one pipe per job can then run
     * twice as many jobs under the same fd limit. The trade: the calls
     * on the handle start from the numeric pid, which the kernel keeps
     * for the process only until it is reaped, and a foreign reaper
     * (waitpid(-1) elsewhere, SIGCHLD set to SIG_IGN) may let it go to
     * another process. Where pidfds live in pidfs (Linux 6.9), which
     * numbers each process once, the spawn reads the process's number
     * through a pidfd: with the clone and fork backends one made with the
     * process (CLONE_PIDFD) and closed at once (four more system calls:
     * waitid(), fstat(), fstatfs(), close()); with the posix_spawn
     * backend, where CLONE_PIDFD is refused, and where no fd is left for
     * it, one opened for a moment just after the start, once the spawn
     * has checked that the pid is still its child (five: pidfd_open(),
     * waitid(), fstat(), fstatfs(), close()), which a
     * child reaped by a foreign reaper in between, its pid gone to
     * another child of the caller's, gets past. Each call on the handle
     * opens one for its own duration and checks it: a pid that names
     * another process by then is ESRCH for fl_kill() and ECHILD for the
     * waits, and nothing reaches that process. Where that fd cannot
     * be had (no fd left at the spawn or at the call, an older kernel),
     * the calls check only that the pid is still an unreaped child of the
     * caller's (waitid with WNOWAIT): a reap between that check and a
     * kill, or a pid reused by another child of the caller's, gets past
     * it (a wait would then take that child's status; so would the reap
     * of a launch, FL_NO_WAIT_EXEC, whose child failed before its exec);
     * a pidfd has no such window. A timed fl_wait() sleeps in poll() on
     * the pidfd it opens rather than polling. */
    FL_NO_PIDFD       = 1u << 14,
    /* setsid(), then make the child's fd .tty->fd (fd 0 when .tty is
     * NULL) its controlling terminal with ioctl(TIOCSCTTY), once the
     * stdio and the fd maps are in place. The terminal must be no
     * session's controlling terminal yet (else EPERM at step setctty;
     * an fd that is no terminal gives ENOTTY; one that no stdio stream
     * or fd map sets is the caller's, which must be open, else EBADF
     * at step prepare). Not with FL_JOIN_PGROUP
     * or FL_PTY, which does this by itself (EINVAL); not with the
     * posix_spawn backend (ENOTSUP). */
    FL_SETCTTY        = 1u << 15,
    /* For job-control shells: put the child's process group, a new one
     * (FL_NEW_PGROUP is implied) or the one of FL_JOIN_PGROUP, in the
     * foreground of the terminal at the child's fd .tty->fd (fd 0 when
     * .tty is NULL), which must be the caller's controlling terminal
     * (else ENOTTY at step tcsetpgrp). It is done in the child before
     * exec, with SIGTTOU blocked around it so that the child is never
     * stopped for it: the program never starts in the background, and
     * no race with its first read of the terminal. fl_tty_reclaim()
     * takes the terminal back. A spawn that fails after the terminal
     * was handed over (at exec, say) gives it back itself: if its
     * foreground group is the dead child's (no process left in it), it
     * goes back to the group that had it before the spawn (the shell's,
     * when the caller runs in the background), else to the caller's,
     * through the caller's fd that the child's came from while it is
     * still that terminal, else through /dev/tty, opened for the moment
     * (where the child opened the terminal itself, FL_FILE), with
     * SIGTTOU blocked in the calling thread; never taken from another,
     * live group, nor from one that had it before the spawn. Not with FL_SETSID, FL_SETCTTY or
     * FL_PTY, whose new session cannot use the caller's terminal
     * (EINVAL). The posix_spawn backend uses
     * posix_spawn_file_actions_addtcsetpgrp_np() (glibc 2.35 and
     * later), and says ENOTSUP without it. */
    FL_FOREGROUND     = 1u << 16,
    /* Return as soon as the child exists, without waiting for its exec:
     * the child does its setup and exec on another core while the caller
     * goes on. The clone backend then clones with CLONE_VM but not
     * CLONE_VFORK, on a stack the library owns, and the handle keeps
     * everything the child reads (a copy of the command's strings and
     * arrays, the plan, the error record) until the child has exec'd or
     * failed. So the caller may change or free the command, and return
     * from the function that filled it, at once. The handle is then
     * "launched": a setup or exec failure is not fl_spawn()'s error but
     * is delivered to the first call that asks, fl_launch_finish() (with
     * the struct fl_error, as fl_spawn() would have filled it), or
     * fl_wait(), fl_wait_result(), fl_stop(), fl_communicate(), a
     * pipeline's wait (its errno value, in place of a wait status; the
     * child is reaped). fl_stop() and a stop at a deadline signal at
     * once: a child they end before its exec reads as launched (its
     * status is the signal's), not as failed. fl_close() waits for the
     * exec (or the failure) before it frees: see fl_launch_finish() for
     * the whole rule.
     * fl_spawn() still fails at once for everything the parent checks
     * (EINVAL, a PATH search that finds no usable entry, ENOMEM, a
     * failed clone). Among them: a command whose copy cannot be allocated
     * (argument or environment strings of gigabytes, which exec would
     * refuse with E2BIG) is ENOMEM at FL_STEP_PREPARE; waiting for the
     * exec instead would hang a setup that waits on the caller.
     * The trade: the child has its own copy of the fd table (no
     * CLONE_FILES), so the clone costs a little more with many fds open;
     * unless FL_KEEP_FDS, it drops the fds it does not need first, before
     * any step that may wait, so that an fd the caller closes (a pipe's
     * write end) is not held open by a child still in its setup.
     * The posix_spawn and fork backends cannot start a child that way:
     * with them the flag is accepted and changes nothing, the call waits
     * for the exec as without it and reports a failure itself (the
     * handle says so: its backend is not FL_BACKEND_CLONE, and
     * fl_launch_finish() returns 0 at once). fl_run() and
     * fl_pipeline_spawn() finish the launch before they return, so their
     * errors stay theirs.
     * Before Linux 5.16, a child that dumps core while it still shares
     * the caller's address space (before its exec) takes the caller down
     * with it: the core dump kills every task that uses that memory. Do
     * not send a core-dumping signal (SIGQUIT, SIGABRT, SIGSEGV, SIGBUS,
     * SIGILL, SIGFPE, SIGSYS, SIGTRAP...) to a launch that is still
     * pending there; SIGKILL and SIGTERM are safe.
     * A signal that ends a process by default (SIGTERM, SIGINT, SIGHUP,
     * SIGPIPE, the real-time ones...), sent to the child before its exec,
     * acts as it would on the program: the child starts with every signal
     * blocked, and before anything else sets those back to SIG_DFL
     * (unless FL_KEEP_SIGNALS; .sigignore's to SIG_IGN) and unblocks them
     * as the program's mask will have them, so such a signal is not thrown
     * away for the copy of a SIG_IGN of the caller's, and a setup that
     * waits (an open() of a FIFO) ends by it. The signals that stop the
     * process or dump core keep a SIG_IGN of the caller's, and its mask,
     * until the end of the setup (a stopped child would hold fl_close(),
     * and a core dump the caller, above); one of them that came meanwhile
     * is dropped. One the caller handles is at SIG_DFL from the start.
     * Before all that, the child of a launch made by fl_spawn() itself
     * calls sched_yield() once: a new task tends to take the CPU of the
     * caller that cloned it, and would hold the caller through its setup
     * and exec. Where fl_run() or a pipeline waits for the exec anyway,
     * the child does not yield. A seccomp filter of the caller's that
     * kills on sched_yield() kills such a child, as it would for any
     * other call of its setup. */
    FL_NO_WAIT_EXEC   = 1u << 17,
};

struct termios;

/* The terminal settings of a command (fl_cmd.tty). A NULL pointer and an
 * all-zero struct both mean the defaults. */
struct fl_tty_options {
    /* FL_PTY: the window size the terminal starts with (TIOCSWINSZ),
     * set in the parent before the child starts. 0 and 0 keep the
     * kernel's: 0 rows, 0 columns. */
    unsigned short rows, cols;
    /* FL_PTY: the settings the terminal starts with, as tcsetattr()
     * sets them (TCSANOW), in the parent before the child starts; NULL
     * keeps the kernel's (ICANON, ECHO, ISIG, OPOST and ONLCR on: the
     * child's "\n" reads as "\r\n" on the master). */
    const struct termios *termios;
    /* FL_SETCTTY and FL_FOREGROUND: the child's fd, as the stdio and the
     * fd maps set it, that is the terminal. A negative fd is EINVAL; one
     * that no stdio stream or fd map sets is the caller's fd of that
     * number, inherited as it is, and not open is EBADF (step prepare,
     * .index the fd). */
    int fd;
    void *reserved_[4];      /* must be zero */
};

/*
 * A command: what to run and how the child is set up. The caller owns the
 * struct and everything it points to; fl_spawn() only reads them, and keeps
 * no pointer into them once it returns.
 *
 * The child's setup runs in this order, and the first step that fails stops
 * it: (a launch's child yields its CPU first, see FL_NO_WAIT_EXEC) the
 * signals whose default action ends a process (back to SIG_DFL, then
 * unblocked where the child's final mask leaves them so: a setup that
 * waits, an open() of a FIFO, ends by one even when the caller blocks it,
 * as a supervisor that reads a signalfd does; see also FL_NO_WAIT_EXEC),
 * pdeathsig (so that the parent's death ends a setup that waits, with a
 * signal whose default action ends a process: the others keep the
 * caller's SIG_IGN and mask until the end, see below),
 * setsid / setpgid, the rlimits that raise a soft limit (room for the
 * setup, as prlimit(1) gives its command: an fd map above the caller's
 * RLIMIT_NOFILE), umask, cgroup, chdir, stdio and fd maps, the
 * controlling terminal (setctty: FL_PTY, FL_SETCTTY) or the foreground
 * group (tcsetpgrp: FL_FOREGROUND), closing other fds, the rlimits that
 * lower one (after every step that opens an fd: a low RLIMIT_NOFILE is
 * the program's), setgroups, setgid, setuid, pdeathsig again (the
 * credentials clear it), the other
 * signals, .sigignore and the mask, exec. Of two .rlimits entries for one
 * resource, the last is set.
 * .contain and .sched add steps to it: see "Containment" for the whole
 * order.
 */
struct fl_cmd {
    /* The arguments, NULL-terminated; argv[0] must be present. Unless
     * .path is set, argv[0] is also the program: a name containing '/' is
     * used as is, any other name is searched in the PATH of the child's
     * environment (not the parent's), or in confstr(_CS_PATH) when that
     * environment has no PATH. */
    char *const *argv;
    /* The file to execute, if it differs from argv[0]; searched like
     * argv[0] when it has no '/'. */
    const char *path;

    /* The base environment ("NAME=VALUE" strings, NULL-terminated). NULL
     * means the caller's environ as it is when the call starts: read in
     * place where glibc says the process never had a second thread (the
     * clone and posix_spawn backends, not a launch), copied in the parent
     * otherwise. Ignored with FL_ENV_CLEAR. Its strings are passed as
     * they are: one without '=' is not checked. */
    char *const *env;
    /* Edits applied in order on top of the base: set "NAME=VALUE" (a
     * string without '=', or with an empty NAME, is EINVAL), then unset
     * NAME (a name with '=' or an empty name is EINVAL). Either may be
     * NULL. A set takes the place of the first entry of that name and
     * removes any later ones, so the child sees the name once; an unset
     * removes every entry of it. */
    const char *const *env_set;
    const char *const *env_unset;

    /* The child's working directory, or NULL to keep the parent's. */
    const char *cwd;

    /* fds 0, 1 and 2. */
    struct fl_stdio stdio[3];

    /* Extra fds, see struct fl_fd_map. Two maps with the same child_fd are
     * EINVAL, so is a negative fd; a parent_fd that is not open is EBADF. */
    const struct fl_fd_map *fds;
    size_t nfds;

    /* FL_* flags from enum fl_flags. */
    unsigned flags;

    /* The child's signal mask. NULL means empty (or, with FL_KEEP_SIGNALS,
     * the calling thread's mask). */
    const sigset_t *sigmask;
    /* Signals reset to SIG_DFL all the same: with FL_KEEP_SIGNALS, or on
     * top of the default reset (see FL_KEEP_SIGNALS on real-time signals). */
    const sigset_t *sigdefault;

    /* With FL_JOIN_PGROUP: the process group to join. */
    pid_t pgid;

    /* Resource limits, applied in order. */
    const struct fl_rlimit *rlimits;
    size_t nrlimits;

    /* With FL_SET_UMASK. */
    mode_t umask;

    /* Credentials, with FL_SET_UID / FL_SET_GID / FL_SET_GROUPS. They are
     * changed with raw syscalls in the child in the order groups, gid, uid,
     * and each change sets the real, effective and saved ids, so a failure
     * at any step stops the spawn rather than exec with privileges the
     * caller asked to drop. An id of (uid_t)-1 or (gid_t)-1, which the
     * calls read as "unchanged" or refuse, is EINVAL at FL_STEP_PREPARE
     * (a group's .index is its place in .groups); so are more than 65536
     * groups. With FL_SET_UID the inheritable capability set is emptied
     * first (and with it the ambient set), so that no program file's
     * inheritable bits hand the new user the caller's capabilities; only
     * .contain->cap_ambient puts some back.
     *
     * Running a less trusted user's program: on the caller's terminal it
     * can push input into the terminal (TIOCSTI, where the kernel still
     * allows it), which the caller's shell then reads, unless it has a
     * terminal of its own (FL_PTY), as sudo's use_pty gives it. A session
     * of its own (FL_SETSID) stops TIOCSTI but lets a process it leaves
     * behind read the terminal past job control. And while it sets up,
     * before its exec, any process of that user may stop it (SIGSTOP): a
     * blocking spawn's caller then waits as long; FL_NO_WAIT_EXEC does not
     * wait, and its deadlines hold. */
    uid_t uid;
    gid_t gid;
    const gid_t *groups;
    size_t ngroups;

    /* A signal the child gets when the thread that spawned it exits (not
     * the process: see prctl(2) PR_SET_PDEATHSIG). 0 means none. Set
     * before the setup's steps that may wait (the open() of a FIFO), which
     * the parent's death then ends, but for a signal that stops the process
     * or dumps core and that the caller ignores or blocks (the setup keeps
     * those as the caller has them, see FL_NO_WAIT_EXEC); and again after
     * the credential change, which clears it; checked against a
     * parent that already died, or a spawning thread (other than the main
     * one) that ended during a launch's setup: the child then gets the
     * signal before exec, once its signals are as its program would have
     * them (one the caller ignores is reset first, unless kept). */
    int pdeathsig;

    /* A cgroup directory (cgroup v2, or a v1 hierarchy) the child joins
     * before exec. With clone3() the kernel places it (CLONE_INTO_CGROUP);
     * otherwise, and for a launch (FL_NO_WAIT_EXEC), the child writes
     * itself into cgroup.procs. Linux 6.18 SIGKILLs at birth a child
     * cloned into a cgroup once emptied through cgroup.kill (as
     * FL_STOP_CGROUP does): a spawn sees that its child never ran, starts
     * it again that other way, and uses it from then on. A cgroup at its
     * pids.max refuses a clone into it (EAGAIN, step clone), but not a
     * write to cgroup.procs: the fork backend and a launch place the child
     * there all the same, as a supervisor that forks and then moves its
     * child does. */
    const char *cgroup;

    enum fl_backend backend;

    /* Signals set to SIG_IGN in the child, after every other signal
     * setting (it wins over .sigdefault), as env(1) --ignore-signal does.
     * exec keeps SIG_IGN, so the program starts with them ignored. SIGKILL
     * and SIGSTOP cannot be ignored: EINVAL. The posix_spawn backend
     * cannot set a disposition to SIG_IGN: ENOTSUP. NULL means none. */
    const sigset_t *sigignore;

    /* Terminal settings for FL_PTY, FL_SETCTTY and FL_FOREGROUND; NULL
     * means all zero. Settings that apply only to FL_PTY (rows, cols,
     * termios) without an FL_PTY stream are EINVAL, not dropped. */
    const struct fl_tty_options *tty;

    /* Namespaces, root, privileges and filters (see "Containment"
     * below); NULL means none. */
    const struct fl_contain *contain;
    /* CPU affinity, nice value, I/O priority and OOM score (see
     * "Placement" below); NULL means the caller's, inherited. */
    const struct fl_sched *sched;

    /* Reserved for later fields; must be zero. */
    void *reserved_[4];
};

/* ------------------------------------------------------------------------ */
/* Containment                                                              */
/* ------------------------------------------------------------------------ */

/*
 * What fl_cmd.contain sets up in the child, with raw system calls, without
 * a fork and without a wrapper program (unshare(1), setpriv(1), bwrap):
 * the spawn costs what it costs without them, whatever the caller's size.
 * Only the clone and fork backends can do this; with the posix_spawn
 * backend a .contain or .sched that sets anything is ENOTSUP.
 *
 * The order, each step its own enum fl_step:
 *
 *   clone     the namespaces (.unshare), made with the process
 *   signals   those whose default action ends a process
 *   ...       pdeathsig
 *   unshare   only the time namespace, where clone() stands in for
 *             clone3() (a kernel before 5.3, or clone3 denied): clone()
 *             has no bit left for it. The program still starts in it:
 *             the kernel moves a process into its time namespace at exec.
 *   id_map    the user namespace's uid_map, setgroups and gid_map
 *   ...       setsid, setpgid, rlimits that raise, umask, cgroup
 *   unshare   the cgroup namespace, when the child wrote itself into
 *             .cgroup (no CLONE_INTO_CGROUP: the fork backend, clone(),
 *             a launch),
 *             so that it is rooted there either way
 *   ...       placement (struct fl_sched)
 *   hostname
 *   mount     every mount made private (MS_REC | MS_PRIVATE)
 *   chroot    then chdir("/"), so that no directory outside stays reachable
 *             (but through an fd kept open: FL_KEEP_FDS, an fd map)
 *   mount     a fresh /proc (FL_MOUNT_PROC), inside the new root
 *   ...       chdir (.cwd, inside the new root), stdio and fd maps, the
 *             terminal, closing the other fds, rlimits that lower
 *   bounding  the capability bounding set, while the child still holds
 *             CAP_SETPCAP: before the credentials change
 *   ...       setgroups, setgid, setuid (PR_SET_KEEPCAPS before them when
 *             ambient capabilities are asked for)
 *   ambient   the inheritable set, then each ambient capability
 *   ...       pdeathsig again
 *   no_new_privs
 *   landlock  the ruleset that the parent built
 *   signals   the others, .sigignore, the mask
 *   seccomp   the filter, last, so that it cannot refuse a step of the
 *             setup (a PATH search looks up which candidates are there
 *             just before it); only exec runs under it (and the
 *             FL_RETRY_ETXTBSY pauses, with the closing of the fds above
 *             2 that comes first, through /proc/self/fd: a filter that
 *             denies nanosleep() ends them), and,
 *             when the exec fails, the child's exit_group(): a filter
 *             that denies it leaves that child unable to end (the
 *             program could not end either), so the spawn never returns
 *   exec
 *
 * Every namespace is made at clone time with clone3(CLONE_VM |
 * CLONE_VFORK): the kernel accepts each of them with a shared address
 * space (Linux 6.x checked; see docs/containment.md). A new user namespace
 * made that way owns the others, so an unprivileged caller can have them
 * all, and the child's whole setup then runs inside it: a step that needs
 * a privilege of the caller's outside it (raising a hard rlimit, writing
 * a cgroup.procs that CLONE_INTO_CGROUP could not use, a lower nice value
 * or oom_score_adj, the real-time I/O class) fails with EPERM or EACCES,
 * even for root (whose own uid, mapped, may still write a cgroup.procs
 * that root owns: that check is the file's). The fork backend makes
 * them with clone() without CLONE_VM, and the time namespace with
 * unshare().
 */

/* Namespaces for fl_contain.unshare: each bit is the clone flag's
 * namespace. */
enum fl_namespace {
    FL_NS_USER   = 1u << 0,  /* CLONE_NEWUSER */
    FL_NS_MOUNT  = 1u << 1,  /* CLONE_NEWNS */
    /* CLONE_NEWPID: the program is pid 1 of the new namespace, its init.
     * Reaping the namespace's orphans is its job: forkless runs no init
     * of its own there (one that never waits, as sleep(1), leaves them
     * zombies until it exits). When it exits the kernel kills every
     * process left in it. As an init it gets from
     * outside only SIGKILL, SIGSTOP and the signals it has a handler
     * for: a stop policy's SIGTERM (or .pdeathsig) does nothing to a
     * program that does not handle it, and SIGKILL comes when the grace
     * runs out. getppid() says 0 in it, so .pdeathsig cannot check
     * whether the caller died before the child set it. */
    FL_NS_PID    = 1u << 2,
    FL_NS_NET    = 1u << 3,  /* CLONE_NEWNET: only a loopback, down */
    FL_NS_IPC    = 1u << 4,  /* CLONE_NEWIPC */
    FL_NS_UTS    = 1u << 5,  /* CLONE_NEWUTS: see .hostname */
    FL_NS_CGROUP = 1u << 6,  /* CLONE_NEWCGROUP */
    FL_NS_TIME   = 1u << 7,  /* CLONE_NEWTIME (Linux 5.6): offsets zero */
};

/* The map of a new user namespace (fl_contain.map). The child writes it
 * itself, from inside, where it holds no capability over the caller's
 * namespace, root or not: one line, the caller's effective uid (and gid)
 * outside to one id inside, after "deny" in setgroups, which the kernel
 * asks for before such a gid map. setgroups() is then refused inside,
 * even for root: FL_SET_GROUPS fails with EPERM at step setgroups. An
 * unprivileged caller that is not dumpable (PR_SET_DUMPABLE 0) gets
 * EACCES at step id_map (its child's /proc files are root's then); root
 * (CAP_DAC_OVERRIDE) writes the map all the same. Wider maps, such as a range of subordinate ids, need a
 * privileged helper (newuidmap(1), newgidmap(1)) writing from outside
 * while the child waits; this library does not do that. */
enum fl_id_map {
    FL_MAP_NONE = 0,   /* no map: every id reads as the overflow id, 65534 */
    FL_MAP_ROOT,       /* the caller's uid and gid are 0 inside */
    FL_MAP_CURRENT,    /* the caller's uid and gid are the same inside */
};

/* Flags for fl_contain.flags. */
enum fl_contain_flags {
    /* prctl(PR_SET_NO_NEW_PRIVS): exec can give no privilege (setuid
     * bits, file capabilities) from then on, in the program and all it
     * starts. Landlock and seccomp need it unless the child holds
     * CAP_SYS_ADMIN in its user namespace (EPERM at step landlock, EACCES
     * at step seccomp): this library does not set it behind the caller's
     * back. */
    FL_NO_NEW_PRIVS         = 1u << 0,
    /* A fresh proc on /proc, mounted nosuid, nodev and noexec, which
     * shows the new PID namespace; with
     * .chroot, on the new root's /proc, mounted after the chroot (a
     * failure there names it as .chroot + "/proc"). Needs FL_NS_MOUNT
     * and FL_NS_PID (EINVAL). */
    FL_MOUNT_PROC           = 1u << 1,
    /* Keep only .cap_bounding in the capability bounding set, and in the
     * inheritable set (the kernel then drops the ambient capabilities
     * outside it too): exec can then give no capability outside it, even
     * to root. A failure of the inheritable set's capset() is step
     * bounding with .index -1. */
    FL_CAP_BOUNDING         = 1u << 2,
    /* The Landlock ruleset uses what the kernel has: rights it cannot
     * restrict stay allowed, and proc.landlock_unenforced lists them (all
     * of them where the kernel has no Landlock; the spawn goes on). One
     * goes the other way: ABI 1 knows no "refer" right, and its kernel
     * refuses every link or rename into another directory (EXDEV), inside
     * the write rules too. Without this flag such a kernel is ENOTSUP at
     * step landlock. */
    FL_LANDLOCK_BEST_EFFORT = 1u << 3,
};

/* The access a Landlock path keeps (fl_landlock_path.access). Everything
 * else on the file system is refused (EACCES) once the ruleset applies,
 * to the program and to everything it starts. */
enum fl_landlock_access {
    FL_LANDLOCK_READ  = 1u << 0,  /* read files, list directories */
    FL_LANDLOCK_EXEC  = 1u << 1,  /* execute files */
    /* write and truncate files, create, remove, rename and link entries,
     * device ioctls */
    FL_LANDLOCK_WRITE = 1u << 2,
};

/* A path beneath which the child keeps some access. A regular file (or
 * another non-directory) keeps only the rights that apply to files. */
struct fl_landlock_path {
    const char *path;
    unsigned access;   /* FL_LANDLOCK_* bits; 0 is EINVAL */
};

struct sock_fprog;

/* A command's containment: fl_cmd.contain. All zero changes nothing. */
struct fl_contain {
    unsigned unshare;        /* FL_NS_* bits */
    enum fl_id_map map;      /* with FL_NS_USER, else only FL_MAP_NONE */
    /* With FL_NS_UTS: the new namespace's host name (at most 64 bytes,
     * else EINVAL, as the kernel says). NULL keeps the caller's. */
    const char *hostname;
    /* A directory that becomes the child's root, after the mounts. .cwd,
     * FL_FILE paths and the PATH search then name paths inside it (but
     * fl_resolve() looks in the caller's root); FL_NULL is the caller's
     * /dev/null, opened in the parent. Landlock paths are opened in the
     * caller's root. chroot() alone confines only a child that cannot
     * chroot again, one without CAP_SYS_CHROOT: a non-root uid (FL_SET_UID,
     * or FL_MAP_CURRENT of a caller that is not root, in a new user
     * namespace) without capabilities, or CAP_SYS_CHROOT left out of
     * FL_CAP_BOUNDING. Uid 0 in a new user namespace (FL_MAP_ROOT, and
     * FL_MAP_CURRENT of a root caller) holds every capability there, this
     * one too, and can climb out of the directory. So can a child that
     * keeps an fd of a directory outside (FL_KEEP_FDS, an fd map). */
    const char *chroot;
    unsigned flags;          /* FL_NO_NEW_PRIVS, ... */
    /* With FL_CAP_BOUNDING: the capabilities kept in the bounding set,
     * bit n for capability n (CAP_NET_BIND_SERVICE is 10). Bits without
     * the flag are EINVAL. */
    unsigned long long cap_bounding;
    /* Ambient capabilities to raise, bit n for capability n: a child that
     * changes to a non-root uid (FL_SET_UID) keeps them across the change
     * and its exec, so a server can bind port 80 without running as root.
     * They must be in the child's permitted set (EPERM at step ambient;
     * .index -1 when the inheritable set could not take them), and in
     * .cap_bounding with FL_CAP_BOUNDING (EINVAL, .index the lowest
     * capability that is not). */
    unsigned long long cap_ambient;
    /* A seccomp BPF program, installed last, just before exec (see
     * fl_seccomp_deny() to build a common one). fl_spawn() copies it,
     * so that the caller may free it once the call returns, a launch's
     * too. NULL: none. */
    const struct sock_fprog *seccomp;
    /* Landlock: the paths the child keeps access to. The parent opens
     * each (a missing one fails at step landlock, before any child
     * exists, with .index the rule and .path the path) and builds the
     * ruleset; the child applies it. Rights: all the file system rights
     * that the kernel's Landlock ABI and this library know (ABI 5:
     * execute, read, write, truncate, refer, make, remove, device ioctl).
     * Without FL_LANDLOCK_BEST_EFFORT, a kernel that lacks one of them is
     * ENOTSUP at step landlock. Network and scope rights are not
     * restricted. */
    const struct fl_landlock_path *landlock;
    size_t nlandlock;
    void *reserved_[6];      /* must be zero */
};

/* The Landlock ABI version of the running kernel (1 to 7 for Linux 5.13
 * to 6.15), or 0 when it has none or it is disabled. Thread-safe and
 * async-signal-safe. */
FL_API int fl_landlock_abi(void);

/* Builds a seccomp filter that makes each system call in syscalls[] (n
 * numbers, as in <sys/syscall.h>) fail with errno_value and lets every
 * other one run. It first checks the architecture: a call made through
 * another ABI than this build's (32-bit calls on x86_64, and x32 ones)
 * kills the process, so that no number slips through under another
 * meaning. prog->filter is allocated: free it with fl_seccomp_free().
 * Returns 0, EINVAL (errno_value not within 1-4095, a negative number,
 * exit_group or exit, without which no process can end, or more than
 * 1,000 numbers: a BPF program holds at most 4,096 instructions), ENOTSUP (an architecture this library has no audit
 * number for) or ENOMEM. Thread-safe; not async-signal-safe. */
FL_API int fl_seccomp_deny(const int *syscalls, size_t n, int errno_value,
                           struct sock_fprog *prog);
/* Frees what fl_seccomp_deny() allocated and empties *prog; NULL is
 * allowed. Thread-safe for different filters; not async-signal-safe (it
 * calls free()). */
FL_API void fl_seccomp_free(struct sock_fprog *prog);
/* The number of the system call called name ("openat", "ptrace") on this
 * build's architecture, or -1 when it has none. The table is made at build
 * time from the kernel headers. Thread-safe and async-signal-safe. */
FL_API int fl_syscall_number(const char *name);

/* ------------------------------------------------------------------------ */
/* Placement                                                                */
/* ------------------------------------------------------------------------ */

/* Settings of struct fl_sched, for .set, .best_effort and
 * proc.not_applied. */
enum fl_sched_setting {
    FL_SCHED_CPUS          = 1u << 0,  /* sched_setaffinity(.cpus) */
    FL_SCHED_NICE          = 1u << 1,  /* setpriority(.nice) */
    FL_SCHED_IOPRIO        = 1u << 2,  /* ioprio_set(.ioprio_class, .ioprio_level) */
    /* /proc/self/oom_score_adj. The kernel copies a score that a process
     * writes to every other process on its address space, unless the
     * writer is a vfork child: a launch's child (FL_NO_WAIT_EXEC) would
     * give the caller its score. So the clone backend does not launch a
     * command that sets it: it waits for the exec all the same (the
     * handle has no launch pending; fl_launch_finish() returns 0 at
     * once), as the other backends do with the flag. */
    FL_SCHED_OOM_SCORE_ADJ = 1u << 3,
};

/* I/O scheduling classes (ioprio_set(2)). */
enum fl_ioprio_class {
    FL_IOPRIO_REALTIME = 1,   /* levels 0-7; needs CAP_SYS_NICE or CAP_SYS_ADMIN */
    FL_IOPRIO_BEST_EFFORT = 2,  /* levels 0-7 */
    FL_IOPRIO_IDLE = 3,       /* level 0-7 checked, then unused by the kernel */
};

/* Where the child runs and how it is scheduled: fl_cmd.sched. Each
 * setting applies in the child before exec, in the order of enum
 * fl_sched_setting, after the cgroup and before the mounts. */
struct fl_sched {
    unsigned set;           /* FL_SCHED_* bits: which of the fields apply */
    /* FL_SCHED_* bits (within .set) whose failure does not stop the spawn:
     * a container may forbid a lower nice value, a machine have fewer
     * CPUs. The handle's not_applied says which did not apply. The others
     * fail the spawn with their step. */
    unsigned best_effort;
    /* FL_SCHED_CPUS: the CPU mask, a cpu_set_t of cpus_size bytes (as for
     * sched_setaffinity(2); CPU_ALLOC_SIZE() for a large one), at most
     * 64 KiB, else EINVAL. A mask with no CPU the child may use is
     * EINVAL. */
    const void *cpus;
    size_t cpus_size;
    int nice;               /* FL_SCHED_NICE: -20 to 19, else EINVAL */
    int ioprio_class;       /* FL_SCHED_IOPRIO: FL_IOPRIO_* */
    int ioprio_level;       /* 0 (highest) to 7 */
    int oom_score_adj;      /* FL_SCHED_OOM_SCORE_ADJ: -1000 to 1000 */
    void *reserved_[4];     /* must be zero */
};

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* The step of a spawn that failed. */
enum fl_step {
    FL_STEP_NONE = 0,
    /* Validating and preparing in the parent; .index: the stdio stream
     * (0-2) at fault, the entry of .fds at fault, the terminal fd that is
     * not open (.tty), fl_split()'s byte offset; -1 for the rest. */
    FL_STEP_PREPARE,
    FL_STEP_CLONE,      /* creating the process (clone, fork, pipe, ...) */
    FL_STEP_SETSID,
    FL_STEP_SETPGID,
    FL_STEP_RLIMIT,     /* .index: the entry of .rlimits; .path its name ("NOFILE") */
    FL_STEP_UMASK,
    FL_STEP_CGROUP,
    FL_STEP_CHDIR,
    FL_STEP_OPEN,       /* .index: the child fd being opened */
    FL_STEP_DUP,        /* .index: the child fd being set */
    FL_STEP_CLOSE_FDS,  /* .index 1: the walk of /proc/self/fd (no close_range) */
    FL_STEP_SETGROUPS,
    FL_STEP_SETGID,
    FL_STEP_SETUID,
    FL_STEP_PDEATHSIG,
    FL_STEP_SIGNALS,
    /* .index: which PATH candidate gave .err. A search where none ran
     * reports EACCES for the first file without permission; else the
     * first file that was there (its #! interpreter or loader missing)
     * with exec's error for it (under a seccomp filter, which lets the
     * child look only before it, one of the first 64 candidates); else
     * ENOENT, .index -1, "not found in PATH". */
    FL_STEP_EXEC,
    /* posix_spawn() failed, and it does not say where; .index and .path:
     * the PATH candidate it was given, as for FL_STEP_EXEC. */
    FL_STEP_SPAWN,
    /* FL_PTY, in the parent: opening the pseudo-terminal (posix_openpt,
     * grantpt, unlockpt, its terminal side) or setting its window size
     * or termios; .path is /dev/ptmx or the terminal, .detail which. */
    FL_STEP_OPENPT,
    FL_STEP_SETCTTY,    /* TIOCSCTTY; .index: the child fd */
    FL_STEP_TCSETPGRP,  /* TIOCSPGRP (FL_FOREGROUND); .index: the child fd */
    /* Containment (struct fl_contain), in the order the child runs them. */
    /* unshare() of a namespace clone() cannot make: the time namespace
     * (with the fork backend, or where clone3() is unusable), or a cgroup
     * namespace made after the child has written itself into .cgroup;
     * .index: FL_NS_TIME or FL_NS_CGROUP. A time namespace that clone3()
     * refuses for want of privilege is EPERM at step clone, as the other
     * namespaces are. */
    FL_STEP_UNSHARE,
    /* Writing the user namespace's maps; .path the file: .index 0
     * uid_map, 1 setgroups, 2 gid_map. */
    FL_STEP_ID_MAP,
    FL_STEP_HOSTNAME,   /* sethostname(); .path the name */
    /* mount(); .path the target: .index 0 making every mount private, 1
     * the fresh /proc. */
    FL_STEP_MOUNT,
    FL_STEP_CHROOT,     /* chroot() or the chdir("/") after it; .path the root */
    /* PR_CAPBSET_DROP; .index the capability, or -1 for the inheritable
     * set trimmed to the same capabilities (capset) after the drops. */
    FL_STEP_BOUNDING,
    /* PR_SET_KEEPCAPS, the inheritable set (capset) or PR_CAP_AMBIENT_RAISE;
     * .index the capability, -1 for the first two. */
    FL_STEP_AMBIENT,
    FL_STEP_NO_NEW_PRIVS,
    /* Building the ruleset, in the parent (.index the rule, .path its
     * path), or landlock_restrict_self() in the child (.index -1). */
    FL_STEP_LANDLOCK,
    FL_STEP_SECCOMP,
    /* Placement (struct fl_sched). */
    FL_STEP_AFFINITY,
    FL_STEP_NICE,
    FL_STEP_IOPRIO,
    FL_STEP_OOM_SCORE_ADJ,  /* .path /proc/self/oom_score_adj */
};

#define FL_ERROR_PATH_MAX 1024
#define FL_ERROR_DETAIL_MAX 160

/* Where a spawn failed. fl_spawn() fills it on failure and clears it on
 * success. */
struct fl_error {
    int err;                /* the errno value, as fl_spawn() returned */
    enum fl_step step;
    int index;              /* see enum fl_step; -1 when it does not apply */
    /* The path the step was working on (the program, the cwd, the file;
     * for FL_STEP_RLIMIT the resource's name); "" when there is none. One
     * longer than the record is cut to fit, and then ends in "...". */
    char path[FL_ERROR_PATH_MAX];
    /* More, in words, or "": "argument 3 is longer than MAX_ARG_STRLEN",
     * "interpreter \"/usr/bin/pyhton\" not found", "dynamic loader
     * \"/lib/ld-musl-x86_64.so.1\" not found". */
    char detail[FL_ERROR_DETAIL_MAX];
    /* A pipeline's failure: the stage that could not be started, counted
     * from 1 (stages[stage - 1]); 0 for everything else, so that a zeroed
     * record reads as before. */
    int stage;
};

/* The step's name: "chdir", "exec", ... Never NULL. Thread-safe and
 * async-signal-safe. */
FL_API const char *fl_step_name(enum fl_step step);

/* Formats an error for people, as
 *     chdir "/nope": No such file or directory
 *     stage 2: exec "nope": No such file or directory (not found in PATH)
 *     exec "/tmp/x.sh": No such file or directory (interpreter "/bin/bash\r" not found)
 * into buf (always NUL-terminated when size > 0, truncated to fit) and
 * returns buf. Control characters of the path and the detail (C0, DEL and
 * the C1 controls, in UTF-8 or as bytes outside a UTF-8 character) are
 * written as C escapes ("\n", "\x1b", "\xc2\x9b"), so that the message
 * is one line that a terminal shows as it is. A NULL e formats as no
 * error (""). Thread-safe; not async-signal-safe (it uses strerror_r). */
FL_API char *fl_error_format(const struct fl_error *e, char *buf, size_t size);

/* The backend's name: "auto", "clone", "posix_spawn" or "fork"; "?" for
 * any other value. Thread-safe and async-signal-safe. */
FL_API const char *fl_backend_name(enum fl_backend b);

/* ------------------------------------------------------------------------ */
/* Spawning                                                                 */
/* ------------------------------------------------------------------------ */

/* A started process. Treat the fields as read-only, and do not copy the
 * struct to use both copies: once one is closed, the pidfd number the
 * other holds may name a file or a process that is not this one. Pass a
 * pointer instead, as with a libuv handle. */
struct fl_proc {
    pid_t pid;
    /* A pidfd for the process, or -1 with FL_NO_PIDFD or on a kernel
     * without pidfds. The posix_spawn backend, and the others where
     * CLONE_PIDFD is denied, open it just after the start; if that fails
     * (no fd left), the handle does without, as with FL_NO_PIDFD. A
     * child that a foreign reaper (waitpid(-1) elsewhere) reaps before
     * that open, its pid then taken by another child of the caller's,
     * would give the handle that process: the open checks only that the
     * pid is still its child. The clone and fork backends get it as the
     * child is made (CLONE_PIDFD). Where no fd is left for it then, the
     * clone backend fails the spawn with EMFILE at step clone; the fork
     * backend, whose error pipe holds two fds at that moment, opens it
     * just after the start, once the pipe is closed.
     * Owned by the handle: fl_close() closes it. An event loop may poll
     * it with other fds (POLLIN once the process has ended, see
     * pidfd_open(2)) and then fl_wait() with a timeout of 0; the
     * library's own waits retry EINTR, so a signal does not end them. */
    int pidfd;
    /* The parent's ends of FL_PIPE streams (FD_CLOEXEC set), else -1.
     * Owned by the handle until the caller closes one and sets it to -1. */
    int stdio[3];
    /* The backend that really ran: never FL_BACKEND_AUTO. */
    enum fl_backend backend;
    /* Internal state, the library's alone (set at the start, and once the
     * process has been waited for). */
    int state_;
    /* CLOCK_MONOTONIC in nanoseconds when fl_spawn() started it, for the
     * result's elapsed time. */
    long long start_ns_;
    /* FL_PTY: the master side of the child's terminal (O_RDWR, blocking,
     * FD_CLOEXEC set from its creation), else -1; the FL_PTY streams'
     * stdio[] entries stay -1. One field rather than stdio[]: the
     * streams share one terminal, which cannot be closed one direction
     * at a time as a pipe can (see "Terminals"). Owned by the handle:
     * fl_close() closes it; fl_communicate() reads and feeds it, then
     * closes it and sets it to -1, as it does the pipe ends. */
    int pty;
    /* The rest of the space that was void *reserved_[2], the same size
     * on 32- and 64-bit: launch_ is internal, the record of a launch with
     * FL_NO_WAIT_EXEC until it is finished with (NULL: none pending, as
     * for every handle without the flag). */
#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 8
    int reserved_int_[1];
#endif
    void *launch_;
    /* The fl_sched.best_effort settings that did not apply (FL_SCHED_*
     * bits); 0 when all did, and for every other handle. Of a launch
     * (FL_NO_WAIT_EXEC), known once it is finished (fl_launch_finish()). */
    unsigned not_applied;
    /* With FL_LANDLOCK_BEST_EFFORT: the LANDLOCK_ACCESS_FS_* rights
     * (<linux/landlock.h>) that this library restricts but the kernel
     * could not, so that they stay allowed everywhere; all of them when
     * the kernel has no Landlock. 0 otherwise. Never REFER where the
     * kernel has Landlock: ABI 1 denies it everywhere. */
    unsigned landlock_unenforced;
    /* Internal, for a handle without a pidfd (FL_NO_PIDFD): the pidfs
     * inode number of its process, read from a pidfd opened for a moment
     * at the start, 0 where it could not be had, all ones where the
     * process was no longer the caller's child by then. It tells the
     * process from a later one that reuses its pid. */
#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 8
    unsigned long long ident_;
    /* Reserved for later fields, zero in a handle fl_spawn() filled. */
    void *reserved_[2];
#else
    unsigned long ident_;
    void *reserved_[1];
#endif
};

/*
 * Starts cmd and fills *proc. Returns 0 on success, or an errno value:
 *
 *   EINVAL   a malformed command: no argv or argv[0], bad flag bits, an env
 *            edit without '=', two maps to one child fd, a negative fd,
 *            a bad backend, FL_TO_STDOUT on fd 1, a reserved field not
 *            zero, FL_SET_UID with uid (uid_t)-1 or FL_SET_GID with gid
 *            (gid_t)-1 (which setresuid() would take for "unchanged")
 *   EBADF    an FL_FD or map names a parent fd that is not open, or
 *            FL_TO_STDOUT copies an inherited fd 1 that is not (step
 *            prepare), or a map's child_fd is not below the child's
 *            RLIMIT_NOFILE (step dup, index = the child fd)
 *   E2BIG    exec's, for the file it found (step exec, index = the
 *            candidate): an argument or environment string longer than
 *            MAX_ARG_STRLEN, or all of them together, with their pointers
 *            and the path exec is given, over ARG_MAX, a quarter of the
 *            stack limit; error->detail says which ("argument 3 is ...",
 *            "environment variable NAME is ..."). Exec looks for the
 *            file before it counts, so a missing or forbidden program is
 *            ENOENT or EACCES whatever its arguments; but Linux 5.9 to
 *            6.7 counted first (E2BIG)
 *   ENAMETOOLONG  the program, .cwd or a file path is longer than PATH_MAX,
 *            or a program name without '/' longer than NAME_MAX, which no
 *            PATH entry can hold (step exec, index -1, found before the
 *            clone, as execvp() says it without a search). In a search, a
 *            candidate longer than PATH_MAX (a long PATH entry) is not
 *            there, as sh and Python skip it: a search with no other is
 *            ENOENT, where execvp() says ENAMETOOLONG
 *   ENOTSUP  the chosen backend cannot express an option, or FL_NO_FORK
 *            forbids the backend
 *   ENOMEM, EMFILE, EAGAIN (RLIMIT_NPROC), ...   from the parent's steps
 *   any errno of a child step, ENOENT and EACCES from exec among them;
 *            ENOENT at step exec for an empty program name, as execve("")
 *
 * On failure *proc is set to an empty handle (pid 0, fds -1), nothing is
 * left open and no zombie is left; error, when not NULL, says where it
 * failed. On success error is cleared.
 *
 * A child killed by a signal before its exec (a SIGKILL from another
 * process while its setup waits, say) is no error: the process was made,
 * fl_spawn() returns 0 as posix_spawn() does, and the wait status names
 * the signal.
 *
 * A stop signal (SIGTSTP, SIGTTIN, SIGTTOU) that the caller ignores or
 * handles does not stop the child in its setup, as a ^Z to the group while
 * the setup waits (an open() of a FIFO) would otherwise do, holding the
 * caller here until a SIGCONT with its handler unable to run: the caller
 * took that signal, and the child drops it (SIG_DFL again just before the
 * exec). The clone backend's child reads which the caller handles from the
 * stat below; where it is lent none (with glibc, a process that ever had
 * another thread; FL_KEEP_SIGNALS; another thread spawning at that moment;
 * no fd to spare) the parent asks SIGTSTP's disposition, one system call,
 * and a handled SIGTTIN or SIGTTOU (which a terminal sends only to a
 * process that reads or writes it, as the setup does not) may still stop
 * the child; so may any handled stop where the stat it was lent cannot be
 * read, and one that comes in the microseconds between the clone and the
 * child's first steps, where CLONE_CLEAR_SIGHAND has already set it to
 * SIG_DFL. A caller at SIG_DFL stops with the child, as the whole job
 * does. Not so for a launch's child (FL_NO_WAIT_EXEC: fl_run() waits for
 * its exec, but its handler runs meanwhile), nor for the posix_spawn
 * backend's (glibc's child stops).
 *
 * Thread-safe: any number of threads may spawn at once, and signals that
 * arrive meanwhile run their handlers in the parent only. With .env NULL it
 * reads environ, so, as for getenv(3), other threads must not change the
 * environment at the same time. Not async-signal-safe: it allocates.
 * With the clone and posix_spawn backends the spawning thread sleeps in
 * the kernel until the exec (CLONE_VFORK), so what needs it to run waits
 * as long: a
 * setuid() or setgid() of another thread (glibc makes every thread change
 * its ids, with a signal), and a handler for a signal sent to it. A setup
 * that may wait on the caller itself (a FIFO the caller opens next) is
 * the launch's to do (FL_NO_WAIT_EXEC), which does not sleep.
 *
 * A process that exits (exit(), or a return from main()) while another
 * thread's spawn is at its setup leaves the child the stack it runs on:
 * the child, a process of its own, goes on to its exec.
 *
 * Not a cancellation point: it disables cancellation while it runs, so a
 * pthread_cancel() never leaves pipes or an unreaped child behind; a
 * pending request is acted on at the thread's next cancellation point.
 *
 * Any stack that can call it is enough: the clone backend's child runs on
 * a 16 KiB stack of its own, mapped at a thread's first spawn and unmapped
 * when the thread exits.
 *
 * One fd of the library's: the clone backend keeps the process's own
 * /proc/<pid>/task/<pid>/stat open (O_CLOEXEC, opened at the first spawn
 * that needs it), from which its child reads which signals to reset (see
 * FL_KEEP_SIGNALS). An fd count taken before the first spawn sees it as
 * one more; it is never 0, 1 or 2. The library copes with an application
 * that closes it or puts another file at its number: it opens another, and
 * neither reads nor closes that file, unless it is that same stat file
 * opened again, or the swap happens during a spawn (a signal handler; with
 * musl, whose threads the library cannot see, another thread). A fork()
 * child drops the parent's at once. When a spawn finds no fd left for its
 * pidfd, the library gives its own up first; where clone3() is not usable
 * it keeps none.
 */
FL_API int fl_spawn(const struct fl_cmd *cmd, struct fl_proc *proc,
                    struct fl_error *error);

/*
 * Waits until the child of a launch with FL_NO_WAIT_EXEC has exec'd, or
 * has failed before: it does not wait for the program to end. Returns 0
 * once the program runs (error cleared), and for a handle with no launch
 * pending (started without the flag, or by a backend that waits anyway,
 * or already finished with). A child that failed returns its errno, with
 * *error (when not NULL) filled as fl_spawn() fills it (step, index,
 * path, detail); the child is then reaped, so the handle is done with:
 * fl_wait() and fl_kill() say ESRCH, and fl_launch_finish() says the
 * same error again until fl_close(). EINVAL for proc NULL, ESRCH for an
 * empty handle, and ECHILD in a fork() child for a launch its parent made
 * (the copy of the handle: the child of the launch is not its own, to
 * wait for or reap), each with *error at FL_STEP_PREPARE.
 *
 * How the exec is seen: the child is cloned with CLONE_CHILD_CLEARTID on
 * a word of the launch's record, so the kernel clears the word and wakes
 * its futex when the child lets go of the caller's memory, at the exec
 * (once the new program is loaded: the child never reads the caller's
 * memory again) or at its exit (after it wrote its error record). This
 * call sleeps on that futex. A child killed before its exec (SIGKILL
 * through fl_kill(), say) reads as launched: its wait status tells.
 *
 * The rule for the launch's record, the child's stack and the child:
 * the first call that needs the launch settled (this one, a wait, a
 * reap, fl_close()) waits for the word; once it is clear, the stack goes
 * back to the library's pool and the plan is freed, and a failed child
 * is reaped there. fl_close() on a handle whose launch is pending thus
 * waits for the child's exec (or failure), which its setup may delay (an
 * FL_FILE on a FIFO opens only when a writer comes); it frees nothing
 * the child may still read, and leaves no zombie of a child that
 * failed. A child that exec'd is left running, as fl_close() always
 * does. A child stopped before its exec (SIGSTOP, a tracer's stop) is
 * not waited for: fl_close() sets its record aside, and the first spawn
 * (or fl_close() of a launch still pending) once the child has exec'd
 * or ended settles it, reaping a child that failed: until then the child
 * is a zombie, and its record, stack and the caller's dumpable setting
 * (FL_SET_UID) are held, so a process that spawns nothing more keeps
 * them. A failed child that a tracer holds is left for a later one. Such
 * a child, and any launch's before its exec, runs the library's setup
 * code after the call that started it has returned: a plugin that linked
 * the static archive is therefore never unmapped once it has launched
 * (dlclose() leaves it loaded, as RTLD_NODELETE does; the first launch
 * clears a dlerror() not yet read), as libforkless.so never is. Not one
 * whose first launch comes in its own destructor, as it is unloaded.
 * This call and the waits do wait for a stopped child, as waitpid()
 * does, until it is continued or killed. With a launch pending, fl_close() is not
 * async-signal-safe.
 *
 * A launch's child touches nothing of the caller's but its own record:
 * no TLS, no errno, no lock, no allocation; handlers never run in it.
 * The process may exit, or the launching thread end, before the child
 * has exec'd: the child keeps the memory it runs in (the kernel frees an
 * address space when its last user lets go), execs, and is reparented.
 *
 * Not a cancellation point. Thread-safe for different handles; one
 * handle must not be used by two threads at once. Not async-signal-safe.
 */
FL_API int fl_launch_finish(struct fl_proc *proc, struct fl_error *error);

/*
 * Finds the file that fl_spawn() would execute for cmd, using the same
 * PATH rules, and writes it to buf. A candidate must be a regular file that
 * the caller may execute (access(X_OK)); a relative candidate is checked
 * against .cwd, and the answer names it from the caller's directory (a
 * relative .cwd comes in front: as .path, use it without .cwd, or give
 * .cwd as an absolute path). In a PATH search a missing file, an unsearchable directory
 * and a name too long count as "not there"; a program named with '/'
 * gets stat's own error. A search that finds no file to run fails as
 * fl_spawn()'s does (see FL_STEP_EXEC).
 *
 * A script is judged by its #! line as exec judges it, following an
 * interpreter that is itself a script as exec does, to the kernel's depth
 * (5 scripts; ELOOP past it): a missing interpreter is "not there", one the
 * caller may not execute is EACCES, one whose lookup fails otherwise ends
 * the search with that error (ELOOP, say), and a #! line the kernel will
 * not read (see FL_SHELL_FALLBACK) ends it with ENOEXEC, or, with
 * FL_SHELL_FALLBACK, is the file. An ELF program of this machine's own
 * class and kind is judged by the loader it names (its program
 * interpreter) in the same way: a missing loader is "not there", as exec
 * says ENOENT for it (a 32-bit program on a 64-bit system is not judged). A script the
 * caller may execute but not read is taken as the file: its #! line cannot
 * be seen. Nothing else of the format is read: a file that exec refuses
 * with ENOEXEC (neither ELF nor #!, and no binfmt_misc handler of the
 * system's takes it), or with E2BIG once the #! line's interpreter and the
 * script's path are added, is returned as the file, and fl_spawn() of it
 * fails with that errno.
 *
 * A .cwd the caller could not enter (missing, not a directory, not
 * searchable) fails at step chdir before any search, as fl_spawn() fails
 * (not checked under a .contain->chroot, whose .cwd is the new root's).
 *
 * Returns 0, ENOENT, EACCES (only files without permission were found, or
 * a '/' name in a directory the caller may not search), ENOEXEC, ELOOP,
 * ENOTDIR, ENAMETOOLONG, ERANGE (buf too small), EINVAL (no buf, or a
 * size of 0), or EINVAL/E2BIG/EBADF as
 * fl_spawn()'s checks of the command give them (a stdio fd, fd map or
 * terminal fd the caller has not open), and so ENOENT at step open, not
 * exec, for a /dev/fd/N stream path whose fd the caller has not open.
 * error, when not NULL, is filled as fl_spawn() would fill it for the same
 * failure (step, the candidate's index and path, the detail; with
 * .contain->chroot it reads the caller's files, where fl_spawn()'s detail
 * reads the new root's, so the two may name different interpreters).
 *
 * Thread-safe, not async-signal-safe.
 */
FL_API int fl_resolve(const struct fl_cmd *cmd, char *buf, size_t size,
                      struct fl_error *error);

/* ------------------------------------------------------------------------ */
/* Owning the process                                                       */
/* ------------------------------------------------------------------------ */

/*
 * Waits for the process to end and reaps it. timeout_ms is -1 to wait for
 * ever, 0 to poll, or a positive number of milliseconds; any other value is
 * EINVAL. The wait polls the pidfd: no busy loop, no SIGCHLD handler, and
 * a signal handler that interrupts it (EINTR) is retried with the time left.
 * Where waitid(P_PIDFD) is refused (Linux before 5.4; a seccomp filter's
 * EPERM or ENOSYS), the process is reaped by its pid where the pidfd shows
 * that the pid still names it (pidfd_send_signal() with signal 0, else the
 * pidfs identity of pidfd_open(pid)): a pid reaped elsewhere and given to
 * another child of the caller's is ECHILD. Where neither shows it, the
 * pid is reaped once the pidfd says that the process has ended, and only
 * if it has ended there too (a zombie by /proc: one a tracer still holds
 * is waited for): the wait keeps its timeout, and only a child of the
 * caller's that took the pid and has ended too may pass for the handle's
 * process.
 *
 * Returns:
 *   0          *status (when not NULL) holds a wait status for WIFEXITED(),
 *              WEXITSTATUS(), WIFSIGNALED() and WTERMSIG()
 *   ETIMEDOUT  the time ran out; the process keeps running, and may be
 *              waited for again (so does one that has exited while a
 *              tracer, a debugger, still holds its zombie: its status
 *              comes once the tracer lets go)
 *   ECHILD     the process ended but its status was taken elsewhere:
 *              SIGCHLD set to SIG_IGN, or a foreign waitpid(-1)
 *   ESRCH      the handle was already waited for (or is empty)
 *   EINVAL     a bad timeout
 *   EBADF      the handle's pidfd was closed or replaced behind its back
 *              by a file that is not a pidfd (one replaced by another
 *              process's pidfd, a dup2() of the caller's, cannot be told
 *              from the handle's own: the wait is that process's)
 *   other      an errno value of poll() or waitid(); or, for a handle
 *              launched with FL_NO_WAIT_EXEC whose child failed before
 *              its exec, that failure's errno (ENOENT, EACCES, ...: the
 *              child is reaped, *status untouched, and fl_launch_finish()
 *              gives the whole struct fl_error)
 *
 * Only 0, ECHILD and a launch's failure end the handle's life (a later
 * call returns ESRCH); after ETIMEDOUT or any other error the process is
 * still there to wait for, kill or close.
 *
 * fl_wait() is a cancellation point, as waitpid() is: a thread cancelled
 * in it leaves the process unreaped and the handle as it was (a pidfd it
 * borrowed for an FL_NO_PIDFD handle is closed).
 *
 * Thread-safe for different handles; one handle must not be used by two
 * threads at once. Not async-signal-safe.
 */
FL_API int fl_wait(struct fl_proc *proc, int timeout_ms, int *status);

/*
 * Sends sig to the process through its pidfd. Once the process has been
 * waited for, nothing is sent to its numeric pid ever again: the call
 * returns ESRCH. A handle without a pidfd (FL_NO_PIDFD, or a kernel
 * without pidfds) first checks that the pid is still its process, our
 * unreaped child, and returns ESRCH if not (see FL_NO_PIDFD for how, and
 * for the window left where it cannot tell). Where a seccomp filter
 * refuses pidfd_send_signal() (EPERM or ENOSYS; older container profiles
 * do) while the pidfd shows the process still our unreaped child, the
 * signal goes to its pid, with that same window; so it does where the
 * pidfd cannot show it (waitid(P_PIDFD) refused too) while the pid is our
 * unreaped child, as for FL_NO_PIDFD.
 * sig 0 only checks. Returns 0, ESRCH, EINVAL, EPERM, or another errno of
 * pidfd_send_signal() (EBADF for a pidfd closed behind the handle's back).
 * Thread-safe and async-signal-safe.
 */
FL_API int fl_kill(struct fl_proc *proc, int sig);

/*
 * Closes the handle's pidfd and pipe ends, and empties it. It neither
 * kills nor waits: a process that still runs keeps running, and once it
 * ends it stays a zombie until the caller reaps it with waitpid(pid) (or
 * the caller exits). Call fl_wait() first to reap it. Safe on an empty
 * handle, twice, and on a handle that was never filled: an all-zero
 * struct fl_proc (C++ `fl_proc p{}`) has pid 0, and fl_close() then closes
 * nothing, although its fd fields read 0. Thread-safe for different
 * handles, async-signal-safe (but for a handle that still holds the
 * record of an FL_NO_WAIT_EXEC launch: one still pending, which it first
 * waits for until the child's exec or failure, reaping a child that
 * failed (a child stopped before its exec is not waited for: its record
 * is set aside), and one whose child failed; it frees that record with
 * free(); see fl_launch_finish()).
 */
FL_API void fl_close(struct fl_proc *proc);

/* ------------------------------------------------------------------------ */
/* Terminals                                                                */
/* ------------------------------------------------------------------------ */

/*
 * A child with FL_PTY streams runs on a new pseudo-terminal, as under a
 * terminal emulator or script(1): isatty() is true on those streams, it
 * leads a session of its own whose controlling terminal is the pty (so
 * ^C, ^Z and ^\ written to the master signal its foreground group), and
 * the caller holds the master side in proc.pty: what is written there
 * is the child's keyboard input, what is read there is its output.
 *
 * Reading the master: once every process has closed the terminal side
 * (the child and whatever inherited it have ended), read() on the master
 * fails with EIO after the last byte. That EIO is the end of the output,
 * not an error, once two reads in a row say it: Linux can say it once too
 * early (a write and the last close landing in the middle of a read,
 * which then finds the write's bytes not yet arrived; poll() says POLLHUP
 * then too), and the next read() gets those bytes. The library reads on
 * past one EIO. A terminal cannot be half-closed: to end the child's
 * input, write its VEOF character (^D by default; twice when a line is
 * unfinished) in canonical mode, or stop it. The line discipline turns
 * "\n" into "\r\n" on output (OPOST, ONLCR) and echoes input (ECHO)
 * unless .tty->termios says otherwise (cfmakeraw() turns both off). The
 * master's input buffer is a few KiB: a caller that writes much input
 * must read the output meanwhile, or use O_NONBLOCK.
 *
 * fl_communicate() and fl_run() do all of this on proc.pty: see "Capture
 * and communicate".
 */

/*
 * Sets the window size of a terminal, for the master side of a pty
 * (proc.pty) as the child sees it: ioctl(TIOCSWINSZ), and the kernel
 * sends SIGWINCH to the terminal's foreground process group when the
 * size changes. Returns 0, EBADF (fd not open), ENOTTY (not a terminal)
 * or another errno of ioctl(). Thread-safe and async-signal-safe (a
 * SIGWINCH handler of the caller may call it); errno is kept.
 */
FL_API int fl_pty_resize(int fd, unsigned short rows, unsigned short cols);

/*
 * Takes the terminal at fd, the caller's controlling terminal, back into
 * the foreground for the caller's process group, as a shell does when a
 * job it started with FL_FOREGROUND ends or stops: tcsetpgrp(fd,
 * getpgrp()) with SIGTTOU blocked in the calling thread meanwhile, so
 * that a caller in the background is not stopped for it. Returns 0,
 * EBADF, ENOTTY (fd is not the caller's controlling terminal: another
 * session's, or none's) or another errno of tcsetpgrp(). Thread-safe and
 * async-signal-safe (a SIGCHLD handler may call it); errno is kept.
 */
FL_API int fl_tty_reclaim(int fd);

/* ------------------------------------------------------------------------ */
/* Splitting a command line                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Splits line into words as a POSIX shell (dash, not bash: no brace
 * expansion) splits one simple command, and does nothing else:
 *
 *   - blanks (space, tab) separate words; a backslash-newline joins two
 *     lines;
 *   - 'single quotes' keep everything up to the next ' as it is;
 *   - "double quotes" keep everything but \" \\ \$ \` and a backslash-
 *     newline, where the backslash escapes the next character;
 *   - elsewhere a backslash keeps the next character as it is;
 *   - quoted parts and plain text next to each other make one word, and
 *     "" or '' alone make an empty word.
 *
 * Nothing is expanded: *, ?, [ ], ~ and { } are plain text, and so are a
 * first word NAME=VALUE (an assignment to a shell) and reserved words such
 * as `if` or `!`. What a shell would read as an operator, an expansion or
 * a comment is refused with EINVAL: unquoted | & ; < > ( ) $ ` and
 * newline, $ and ` inside double quotes, and # at the start of a word.
 * error->index is then the byte offset (-1 past INT32_MAX), and
 * error->detail names the byte and the character, as in "byte 6: '|' is
 * a pipe in a shell, and no shell runs here"; an unbalanced quote gives
 * the offset of the quote that opens. A line that ends in a lone
 * backslash is EINVAL too (a shell would keep the backslash). The line
 * ends at its first NUL.
 *
 * On success *argv is a NULL-terminated array (no words: argv[0] is NULL)
 * in one allocation, to be freed with fl_split_free(). Returns 0, EINVAL,
 * or ENOMEM; on failure *argv is NULL. Thread-safe; not async-signal-safe
 * (it allocates).
 */
FL_API int fl_split(const char *line, char ***argv, struct fl_error *error);

/* Frees what fl_split() returned; NULL is allowed. Thread-safe; not
 * async-signal-safe (it calls free()). */
FL_API void fl_split_free(char **argv);

/* ------------------------------------------------------------------------ */
/* Results, deadlines and stopping                                          */
/* ------------------------------------------------------------------------ */

/* The grace period of a zero struct fl_stop_policy: 5 seconds between the
 * first signal and SIGKILL, as `forkless run` gives. */
#define FL_STOP_GRACE_MS 5000
/* fl_stop_policy.grace_ms: never send SIGKILL; wait for the process to
 * heed the first signal. The rest of a group or cgroup that the signal
 * reaches is not waited for: what ignores it runs on. */
#define FL_STOP_NEVER_KILL (-1)

/* What a stop reaches. */
enum fl_stop_scope {
    /* The process alone, through its pidfd. */
    FL_STOP_PROCESS = 0,
    /* The process and the process group it leads (it must have been
     * started with FL_NEW_PGROUP or FL_SETSID, or in a session of its own:
     * FL_PTY, FL_SETCTTY), SIGCONT after the first
     * signal so that a stopped member can act on it. The leader is kept
     * unreaped until the group is done with, so that its pid, the
     * group's id, cannot be reused: no signal reaches a stranger. A
     * leader that has moved to another group since (setpgid()) is still
     * stopped with the group it made, which keeps its id, and itself
     * through its pidfd. */
    FL_STOP_GROUP,
    /* Every process in .cgroup and in the cgroups below it (as
     * cgroup.kill and cgroup.events count them): SIGKILL through
     * cgroup.kill where the kernel has it (5.14), and otherwise, as for
     * the first signal, to each pid of their cgroup.procs through a pidfd
     * opened and then checked to be still listed, so that a reused pid
     * is never signalled (one that moves between the tree's cgroups while
     * they are read may miss a signal sent that way, and so may every
     * member where the caller has fewer fds left than one pidfd and a walk
     * of the tree need, the tree's depth and three; cgroup.kill misses
     * none). Every process means all of them, the caller too if it is
     * there: give the command a cgroup of its own. */
    FL_STOP_CGROUP,
};

/* How to stop a process: .signal, then, .grace_ms later, SIGKILL. All
 * zero is SIGTERM, FL_STOP_GRACE_MS, the process alone. Each signal
 * reaches each process once: the group or the cgroup is sent it first,
 * and then, through its pidfd, each process it may have missed (one not
 * in the group both just before and just after, or not among the
 * cgroup's members it reached); only one that moves in or out of the
 * group at that very moment can get two. Many programs take a second TERM
 * or INT as "stop now". */
struct fl_stop_policy {
    int signal;              /* 0: SIGTERM */
    /* 0: FL_STOP_GRACE_MS; FL_STOP_NEVER_KILL; else milliseconds. */
    int grace_ms;
    enum fl_stop_scope scope;
    /* FL_STOP_CGROUP: the cgroup directory; NULL with fl_run() and
     * fl_pipeline_run() means the command's .cgroup. */
    const char *cgroup;
    void *reserved_[4];      /* must be zero */
};

/* One captured stream of a result. */
struct fl_output {
    /* The bytes kept, followed by a NUL that len does not count (so text
     * can be used as a string), or NULL when nothing was captured. In a
     * buffer fl_result_free() frees, unless it is the caller's .buf. */
    char *data;
    size_t len;
    /* Every byte the child wrote to the stream, and how many of them were
     * not kept (the limit, or .discard). */
    unsigned long long total;
    unsigned long long dropped;
    /* More bytes came than the limit: some were dropped (or, with
     * FL_OVERFLOW_STOP, the child was stopped). Output of exactly .limit
     * bytes is not an overflow. */
    bool overflowed;
    /* The pipe was still open .eof_wait_ms after the child ended (a
     * descendant holds it): it was closed without reading further. */
    bool eof_missed;
    unsigned char owned_;    /* internal: whose data is, and how made */
};

/* What a process did, as fl_wait_result(), fl_stop(), fl_communicate()
 * and fl_run() report it. */
struct fl_result {
    int status;              /* the wait status (WIFEXITED() and so on) */
    int exit_code;           /* WEXITSTATUS(), or -1 when a signal ended it */
    int signal;              /* WTERMSIG(), or 0 when it exited */
    bool core_dumped;
    /* The deadline passed while it ran. */
    bool timed_out;
    /* An output's limit with FL_OVERFLOW_STOP, or an on_output callback,
     * asked for the stop. */
    bool stop_requested;
    /* The first signal of the stop policy, when one was sent; 0 if none. */
    int stop_signal;
    /* The policy went on to SIGKILL. */
    bool killed;
    /* The child closed its stdin before it took all of .input (EPIPE), or
     * ended while a process it left behind held the pipe (or pty) without
     * taking the rest until .eof_wait_ms ran out (the library then gave
     * up on the rest and closed its end). */
    bool input_closed;
    /* Bytes of .input written to the child's stdin. A pipe holds what it
     * buffers (64 KiB by default) until the child reads it: a child that
     * ends, or closes its stdin, without reading the last of them leaves
     * them unread, counted here all the same (input_closed stays false
     * when every byte went in): once the library closes its end, which
     * is how the child sees the end of the input, nothing tells how many
     * it read. */
    size_t input_written;
    /* From the start of fl_spawn() to the reap, in nanoseconds. */
    long long elapsed_ns;
    /* The child's resource usage from the reap (waitid()): user and system
     * time and the peak RSS, its waited-for descendants included. */
    struct rusage rusage;
    /* Captured stdout ([0]) and stderr ([1]). */
    struct fl_output out[2];
    void *reserved_[4];
};

/* Frees the output buffers the library allocated in r and empties r.out
 * (a caller's buffer is left alone). Safe on a zero result and twice.
 * Thread-safe for different results, not async-signal-safe. */
FL_API void fl_result_free(struct fl_result *r);

/* r's status as a shell reports it: the exit code, or 128 + the signal;
 * -1 for a result that holds no status (exit_code -1: the command never
 * started, as fl_run() leaves it on failure) and for a NULL r. A shell's
 * 127 or 126 for a program that could not start is the caller's to
 * choose from the struct fl_error (ENOENT at FL_STEP_EXEC: 127; EACCES or
 * ENOEXEC there: 126; another step, a redirection say: 1).
 * Thread-safe and async-signal-safe. */
FL_API int fl_result_shell_status(const struct fl_result *r);

/*
 * Waits for the process to end, as fl_wait() does, and fills *result.
 * timeout_ms is -1 (no deadline), 0 or a positive number of milliseconds.
 * When the time runs out:
 *   - stop NULL: returns ETIMEDOUT; the process keeps running and
 *     *result is not touched;
 *   - otherwise: applies the stop policy (the first signal; SIGKILL after
 *     the grace period), reaps, and returns 0 with result->timed_out set.
 * No busy loop and no SIGCHLD handler: it sleeps in poll() on the pidfd
 * (one borrowed with pidfd_open() for an FL_NO_PIDFD handle), and EINTR
 * is retried with the time left.
 *
 * Returns 0 (reaped, *result filled), ETIMEDOUT, ECHILD (the status was
 * taken elsewhere; the handle is done), ESRCH (already reaped), EINVAL (a
 * bad timeout or policy: a signal out of range, a grace below -1, a scope
 * it does not know, FL_STOP_CGROUP without .cgroup, FL_STOP_GROUP for a
 * process that leads no group and was not started leading one), or
 * another errno of poll() or waitid().
 *
 * A cancellation point, as fl_wait(), in each of its waits, the grace
 * period's included: a thread cancelled after the first signal of a
 * policy leaves the SIGKILL unsent and the process unreaped, the handle
 * holding it (to kill, wait for or close, in a cleanup handler say).
 * Thread-safe for different handles; not async-signal-safe.
 */
FL_API int fl_wait_result(struct fl_proc *proc, int timeout_ms,
                          const struct fl_stop_policy *stop,
                          struct fl_result *result);

/*
 * Stops the process now with the policy (NULL: a zero policy), waits for
 * it, reaps it and fills *result (timed_out false, stop_signal set, even
 * where the process had ended before the signal reached it).
 * Returns as fl_wait_result() but for ETIMEDOUT, which it cannot give,
 * and is a cancellation point as it is.
 * Thread-safe for different handles; not async-signal-safe.
 */
FL_API int fl_stop(struct fl_proc *proc, const struct fl_stop_policy *stop,
                   struct fl_result *result);

/*
 * Sends sig to the process group the process leads (its id is the
 * process's pid: FL_NEW_PGROUP or FL_SETSID), as killpg(pid, sig) would,
 * but only while the process is this caller's unreaped child, so that the
 * id cannot have been reused. Returns 0, ESRCH (reaped, or no such group),
 * EINVAL, EPERM. Kernels from 6.9 can signal "the group of a pidfd's
 * process" (PIDFD_SIGNAL_PROCESS_GROUP), but that is the group the process
 * is in, which is the caller's own when the child leads none: this call
 * signals only the group the child leads. A launch's child
 * (FL_NO_WAIT_EXEC) makes its group in its setup: the call waits for it
 * to (a few system calls), unless the child is stopped before then
 * (SIGSTOP, a tracer's stop; not a cgroup freeze, which the call waits
 * out), when the group the child will lead is the child alone, and the
 * signal goes to it through its pidfd. The check and the kill are
 * two steps: the handle must not be waited for (by another thread, or a
 * signal handler) at the same time, or the id could be reused between
 * them. Thread-safe for different handles, and async-signal-safe.
 */
FL_API int fl_killpg(struct fl_proc *proc, int sig);

/*
 * Sets *running to whether a process of the group the child leads (its id
 * is the child's pid) still runs: a zombie does not, a zombie leader
 * whose other threads run does. Meant for the time after the child has
 * ended and before it is reaped, when its pid keeps the group's id
 * reserved: have the rest of the group finished? A launch's child that is
 * stopped before it made its group runs (see fl_killpg()). It reads
 * /proc. Returns
 * 0, ESRCH (the handle was reaped: the id may be anyone's now), ENOSYS
 * (no /proc, or one of another pid namespace: it cannot tell), EMFILE,
 * ENFILE or ENOMEM (no fd or memory to look with: it cannot tell either),
 * EINVAL.
 * Thread-safe; not async-signal-safe; not a cancellation point.
 */
FL_API int fl_pgroup_running(const struct fl_proc *proc, bool *running);

/* ------------------------------------------------------------------------ */
/* Capture and communicate                                                  */
/* ------------------------------------------------------------------------ */

/* What happens to a stream's bytes past struct fl_sink.limit. */
enum fl_overflow {
    /* Keep the first .limit bytes, read and drop the rest: the child never
     * blocks on a full pipe. */
    FL_OVERFLOW_KEEP_HEAD = 0,
    /* Keep the last .limit bytes (a ring): the tail of a log. */
    FL_OVERFLOW_KEEP_TAIL,
    /* Stop the child with the stop policy; result->stop_requested. */
    FL_OVERFLOW_STOP,
};

/* A callback for output as it comes: stream is 1 or 2. Return 0 to go
 * on; anything else stops the child with the stop policy, and the call
 * returns ECANCELED (with the result filled). It must not call back into
 * the same exchange. */
typedef int (*fl_output_fn)(void *ctx, int stream, const char *data, size_t len);

/* Where one output stream goes. All zero: collect all of it in a buffer
 * the library allocates. */
struct fl_sink {
    /* fl_run(): make a pipe for this stream and take its output. A
     * stream whose .stdio is already FL_PIPE is taken all the same. */
    bool capture;
    /* Keep nothing, only count (and hand it to .on_output); .data stays
     * NULL. A .limit then bounds the bytes counted: past it .overflowed
     * is set, and FL_OVERFLOW_STOP stops the child. */
    bool discard;
    /* The most bytes kept; 0: no limit, or, with .buf, .size - 1. */
    size_t limit;
    enum fl_overflow overflow;
    /* A caller's buffer of .size bytes for the bytes kept (one is kept
     * for the closing NUL, so .size must be at least 1, and .limit, if
     * set, at most .size - 1); NULL: the library allocates, growing as
     * output comes (a ring of .limit bytes is allocated once it fills).
     * The two streams' buffers must not overlap (EINVAL). */
    char *buf;
    size_t size;
    /* Output as it comes, before it is kept. */
    fl_output_fn on_output;
    void *ctx;
    /* .on_output is called with whole lines (each with its '\n'; the last
     * one may have none); a line longer than .max_line (0: 64 KiB) is
     * handed over in pieces of .max_line bytes. Only a line split across
     * reads is copied, into a buffer that grows with it: .max_line bounds
     * it and is never allocated up front. .lines needs .on_output, and
     * .max_line needs .lines (else EINVAL). */
    bool lines;
    size_t max_line;
};

/* An exchange with a child: input, outputs, deadline. A zero struct feeds
 * nothing (stdin, if a pipe, is closed at once; a pty gets its VEOF),
 * collects every pipe and the pty, and has no deadline. */
struct fl_io {
    /* Written to the child's stdin, which is then closed: the stdin pipe,
     * else the pty's master, which then gets VEOF (see fl_communicate()). */
    const void *input;
    size_t input_len;
    struct fl_sink out[2];   /* stdout (and the pty), stderr */
    /* The deadline for the whole exchange in milliseconds; 0: none (unlike
     * fl_wait(), where 0 polls, so that a zero struct waits). A stop of a
     * group or cgroup is due at it also where the processes have ended
     * and the rest of the group or cgroup runs on: result->timed_out says
     * so. fl_run() counts it from the spawn: with the clone backend it
     * launches the child (FL_NO_WAIT_EXEC) when there is a deadline, so
     * that a setup that waits (an FL_FILE on a FIFO with no writer) is
     * stopped at the deadline as the program would be (the result says
     * timed_out, and the status the signal); the posix_spawn and fork
     * backends, and a command with FL_SCHED_OOM_SCORE_ADJ (which cannot
     * be launched), wait for the exec first, unbounded. */
    int timeout_ms;
    /* Applied at the deadline, for FL_OVERFLOW_STOP and for a callback
     * that asks to stop; NULL: a zero policy. */
    const struct fl_stop_policy *stop;
    /* After the child has ended, how long to wait for the end of its
     * output pipes (and of the pty's terminal side), which a descendant
     * can hold open, and for the rest of .input to go into a stdin pipe
     * (or pty) that one holds; then they are closed (what they held by
     * then is kept) and out[n].eof_missed says so (input_closed for the
     * input, when some was left). 0: FL_EOF_WAIT_MS; -1: for ever. A deadline cuts this wait
     * short too, but not before the end of the grace that a stop of a
     * group or cgroup gives the rest of it (its output is read meanwhile,
     * and the call waits that long anyway); after the stop's SIGKILL it
     * lasts 100 ms more at least, for the killed to close the pipes, and
     * while the rest of the group or cgroup that it reached is still seen
     * to run (one that frees much memory takes a while to exit), 5 s at
     * most. The call returns when this wait gives up, which may be before
     * the deadline, and the child is reaped by then: the rest of a group
     * or cgroup is left running, unstopped. To have it stopped, give a
     * wait at least as long as the deadline (or -1): the call then waits
     * for that rest also where it holds no pipe (a daemon that closed its
     * fds) and stops it at the deadline, or returns when it has ended. Or
     * stop a cgroup later by its path. */
    int eof_wait_ms;
    void *reserved_[4];      /* must be zero */
};

#define FL_EOF_WAIT_MS 2000

/*
 * Feeds io->input to the child's stdin and drains its stdout and stderr
 * at once, so that no sizes deadlock, until every pipe is at its end and
 * the child has ended; then reaps it and fills *result. The streams are
 * the handle's pipe ends (proc->stdio[]), which it closes and sets to -1;
 * a stdin pipe with no input is closed at once. io NULL is a zero struct.
 * For stdout and stderr merged in order, start the child with stderr
 * FL_TO_STDOUT: one pipe keeps the order, two could not.
 *
 * A pty (proc->pty >= 0, FL_PTY) is an output stream too: what the master
 * reads goes to io->out[0] and result->out[0] (stream 1 for .on_output).
 * A terminal merges every fd it is on, so out[0] gets them all, in order;
 * a stderr pipe besides stays out[1], but a stdout pipe besides is EINVAL
 * (both would be out[0]; make stdout the pty, or read the master
 * yourself). The line discipline turns "\n" into "\r\n" and echoes the
 * input unless the terminal is raw (.tty->termios from cfmakeraw()). Its
 * end is EIO on the master, once every holder of the terminal side has
 * closed it, said by two reads in a row ("Terminals" says why): the end,
 * not an error. While a process of the exchange lives, that end waits: the
 * master stays open (closing it would hang the terminal up, and SIGHUP
 * would end a child that closed its stdio to work on, where a pipe's
 * reader waits for it) and is read again every 100 ms, so that what a
 * process writes to /dev/tty later is read too. A descendant that holds
 * the terminal side once the processes have ended is given up on after
 * io->eof_wait_ms, as for a pipe (when the child, the session's leader,
 * exits, the kernel sends SIGHUP to the terminal's foreground group,
 * which ends those that neither block nor ignore it). Without a stdin pipe,
 * io->input is written to the master (the child's stdin when its fd 0 is
 * the pty; else only the terminal's input, which /dev/tty reads). The
 * master cannot be half-closed, so the end of the input is the terminal's
 * VEOF character (^D by default), as the settings are then: in canonical
 * mode (ICANON) it is written once after input that ends a line (or
 * none), twice after a partial last line, and the child's read() then
 * returns 0. The input is read as the line discipline reads it in
 * canonical mode (flow control and signal characters, the CR and NL
 * translations, erase, kill and word erase as the kernel's Latin-1 and
 * IUTF8 rules have them, VLNEXT, VEOL, VEOL2, PARMRK): input that ends
 * with its own end of file (VEOF at a line's start) gets no other, and
 * one that ends after a VLNEXT gets three. Without ICANON, with VEOF
 * disabled or read by the settings as something else (VEOF set to "\r"
 * under ICRNL, say), or under EXTPROC (which hands the bytes over
 * unread), nothing can say end of file and no VEOF is written: the child
 * sees the input and no end (stop it, or let it end by what it reads).
 * The settings are the ones when the input has been written: a child that
 * makes its terminal raw after that but before it reads the end (a shell
 * that reads a line, runs it, then starts its line editor) reads the VEOF
 * as a NUL byte, as the kernel turns it, and no end. (`forkless run --pty`
 * waits for the input to be read before its VEOF, and sends one per
 * read.)
 * In canonical mode a line longer than the terminal's line buffer (4095
 * bytes) is cut by the kernel. The master is made
 * O_NONBLOCK, and closed with the pipes at the end (proc->pty = -1).
 *
 * *result is overwritten as soon as the arguments are found good (free a
 * previous one with fl_result_free() first); on every return but EINVAL
 * and ESRCH it is filled, and its buffers are to be freed.
 *
 * A child that closes its stdin early ends the feeding (result->
 * input_closed); SIGPIPE never reaches the caller and its disposition is
 * never changed (SIGPIPE is blocked in the calling thread around each
 * batch of writes, and the one an EPIPE raised is taken back; one that
 * was pending before stays pending). A deadline (counted from the call),
 * an FL_OVERFLOW_STOP limit, or a callback that asks applies the stop
 * policy, while the outputs are still drained. The deadline stops a child
 * that still runs: one that has ended, but whose zombie a tracer (a
 * debugger, strace) still holds, is waited for until the tracer lets it
 * go, as waitpid() waits (fl_wait_result() returns ETIMEDOUT there).
 *
 * Returns 0 (reaped, *result filled), ECANCELED (a callback asked to stop:
 * reaped and filled), ENOMEM (a buffer could not grow: the child was
 * stopped, reaped and *result filled, with what was kept), EINVAL (a bad
 * io or policy, a reserved field not zero, input without a stdin pipe
 * or a pty, a stdout pipe and a pty, a sink that contradicts itself: see
 * struct fl_sink, out[0] and out[1] with overlapping buffers), ESRCH (already reaped), or an errno of poll(),
 * read(), write() or waitid() (the child is stopped and reaped all the
 * same, unless the reap itself failed).
 *
 * Not a cancellation point: it disables cancellation while it runs, so
 * that no pipe or child is left behind. Thread-safe for different
 * handles; not async-signal-safe. Signal handlers may run in the caller
 * meanwhile (EINTR is retried). errno is left as it was.
 */
FL_API int fl_communicate(struct fl_proc *proc, const struct fl_io *io,
                          struct fl_result *result);

/*
 * Starts cmd, takes part in the exchange io describes (NULL: none), waits
 * and fills *result: a system() without a shell. It makes a pipe for
 * stdin when io->input is set, and for stdout and stderr when their sink
 * asks to capture (a stream the command already makes FL_PIPE is taken
 * too); a stream to pipe must be FL_INHERIT or FL_PIPE in cmd, and not
 * mapped by cmd->fds. A command with FL_PTY streams is captured and fed
 * through the master instead, as fl_communicate() says: its streams need
 * no pipe (out[0] gets what all of them write, .capture or not, and
 * io->input goes to the master when stdin is the pty), and a pipe for
 * stdout besides (FL_PIPE, or out[0].capture with stdout not on the pty)
 * is EINVAL. With no pipe at all it only waits, with the
 * deadline and the stop policy. A stop policy with FL_STOP_CGROUP and no
 * .cgroup uses cmd->cgroup; FL_STOP_GROUP needs FL_NEW_PGROUP or
 * FL_SETSID in cmd, FL_FOREGROUND without FL_JOIN_PGROUP, or a session of
 * its own (FL_PTY on a stream that no fd map overrides, FL_SETCTTY).
 *
 * Returns fl_spawn()'s errors (with *error filled), EINVAL for a bad io
 * or one the command contradicts (checked before anything starts; *error
 * filled with step FL_STEP_PREPARE), or fl_communicate()'s (*error filled
 * with its errno, step FL_STEP_NONE: the child did start). A NULL cmd or
 * result is EINVAL. *result is emptied first (all zero but exit_code,
 * -1), so that any failure leaves nothing to free.
 * error may be NULL.
 *
 * Unlike system(), it changes neither signal dispositions nor the mask:
 * a terminal's Ctrl-C reaches both the caller and the child. A caller
 * that wants system()'s behaviour (the caller ignores SIGINT and SIGQUIT
 * while the child runs) blocks them itself around the call; the child
 * still starts with an empty mask.
 *
 * Thread-safe: any number of threads may run commands at once. Not a
 * cancellation point (see fl_communicate()). Not async-signal-safe.
 */
FL_API int fl_run(const struct fl_cmd *cmd, const struct fl_io *io,
                  struct fl_result *result, struct fl_error *error);

/* ------------------------------------------------------------------------ */
/* Pipelines                                                                */
/* ------------------------------------------------------------------------ */

/* A started pipeline: stage k is procs[k]. */
struct fl_pipeline {
    size_t n;
    struct fl_proc *procs;   /* owned: freed by fl_pipeline_close() */
    pid_t pgid;              /* the stages' process group: procs[0].pid */
    void *reserved_[4];
};

/*
 * Starts stages[0] | stages[1] | ... | stages[n-1]: the stdout of each is
 * connected to the stdin of the next by a pipe, with no data passing
 * through the caller. The first stage's stdin and the last stage's stdout
 * take any struct fl_stdio; the stdin of the others and the stdout of all
 * but the last must be FL_INHERIT (0), since the pipe takes their place.
 * Each stage's stderr is its own. All stages join one new process group
 * led by stage 0, so that one signal stops them all (fl_killpg() of
 * procs[0]: a Ctrl-C); the stages must not
 * ask for FL_SETSID, FL_NEW_PGROUP or FL_JOIN_PGROUP, nor, in a pipeline
 * of more than one stage, for FL_PTY (on a stream that no fd map
 * overrides: no pty is made for one that is) or FL_SETCTTY (a session of
 * its own, which would leave the group, or make one no other stage may
 * join); nor may a stage but the first have FL_NS_PID in .contain: in a
 * PID namespace of its own it cannot see the group it would join (each is
 * EINVAL at step prepare, .stage naming it).
 *
 * The first stage's stdin and the last stage's stdout may be FL_PIPE: the
 * caller's ends are then procs[0].stdio[0] and procs[n-1].stdio[1], and a
 * stage's stderr pipe is procs[k].stdio[2]. An fd map onto child fd 0 or
 * 1 that the pipe takes is refused like such a .stdio.
 *
 * Every stage is checked before any starts. The stages are launched
 * (FL_NO_WAIT_EXEC, where the backend can) so that they do their setup
 * and exec side by side, and the call returns once every one has exec'd.
 * The posix_spawn and fork backends start one stage after the other,
 * each waited for to its exec: a setup there that waits (an FL_FILE on a
 * FIFO with no writer) holds the call, and the later stages unstarted,
 * until it ends (a signal to that child ends it).
 * If stage k cannot be started, or is the first whose setup or exec
 * failed, every stage started is killed with SIGKILL (each one and the
 * group) and reaped, nothing is left open, a terminal that a stage took
 * with FL_FOREGROUND goes back as after a failed fl_spawn(), error->stage
 * is k + 1 and the rest of *error is fl_spawn()'s. Returns 0 or
 * fl_spawn()'s errors;
 * EINVAL for n == 0 or no stages (error->stage 0), and for a stage's
 * stdio or fd map that the pipe would replace, a group flag, or a
 * session of its own (error->stage set). On failure *pl is empty.
 * Thread-safe; not async-signal-safe.
 */
FL_API int fl_pipeline_spawn(const struct fl_cmd *stages, size_t n,
                             struct fl_pipeline *pl, struct fl_error *error);

/*
 * Waits for every stage, with fl_wait_result()'s deadline and stop
 * policy, and fills results[0..n-1]. The policy reaches the whole process
 * group (and every stage through its pidfd) whatever its scope, or the
 * cgroup with FL_STOP_CGROUP; timed_out, stop_signal and killed are set
 * alike in every result. No stage is reaped before all have ended and
 * the rest of the group is done with, stage 0, the group's leader, last.
 * Returns as fl_wait_result(): on ETIMEDOUT (stop NULL) every stage is
 * left running and unreaped, results untouched. ECHILD: the status of a
 * stage was taken elsewhere (its result is left with exit_code -1); the
 * others are reaped and filled (fl_pipefail() counts it as failed).
 * ESRCH: a stage was already reaped. EINVAL: a bad timeout or policy, no
 * results, or an empty pipeline (a zero struct, or one closed).
 * A cancellation point, as fl_wait() (borrowed pidfds are closed, nothing
 * is reaped). Thread-safe for different pipelines; one pipeline must not
 * be used by two threads at once. Not async-signal-safe.
 */
FL_API int fl_pipeline_wait(struct fl_pipeline *pl, int timeout_ms,
                            const struct fl_stop_policy *stop,
                            struct fl_result *results);

/*
 * fl_communicate() for a pipeline: io->input goes to the first stage's
 * stdin pipe (results[0].input_written, .input_closed), out[0] takes the
 * last stage's stdout pipe (results[n-1].out[0]), and out[1] applies to
 * each stage's stderr pipe on its own (results[k].out[1]). The streams are
 * the stages' FL_PIPE ends, which it closes, and the pty master of a
 * one-stage pipeline, read into out[0] and fed as fl_communicate() does. The deadline and the stop
 * policy reach the whole group, as in fl_pipeline_wait(); timed_out,
 * stop_signal and killed are set alike in every result. The stages are
 * reaped once all have ended, stage 0 last.
 *
 * Returns as fl_communicate(), and EINVAL also for an out[1] with a
 * caller's .buf when more than one stage has a stderr pipe (their bytes
 * would mix), ESRCH when a stage was already reaped, ENOMEM (nothing
 * touched) when the streams' array cannot be had. Thread-safe for
 * different pipelines; not async-signal-safe.
 */
FL_API int fl_pipeline_communicate(struct fl_pipeline *pl, const struct fl_io *io,
                                   struct fl_result *results);

/* Spawns, communicates, waits, closes: results gets n entries, zeroed
 * first (exit_code -1) once results, stages and n are there, as fl_run()
 * zeroes its result, so that any failure leaves nothing to free. With io,
 * as fl_run() does for one command, it makes a pipe for the first stage's
 * stdin when io->input is set, for the last stage's stdout when out[0]
 * captures, and for every stage's stderr when out[1] captures (each such
 * stream must be FL_INHERIT or FL_PIPE: else EINVAL, with error->stage);
 * FL_STOP_CGROUP without a .cgroup means stages[0].cgroup; io and its
 * policy are checked before anything starts. io->timeout_ms counts from
 * the spawn, as fl_run()'s: with the clone backend a stage whose setup
 * waits (an FL_FILE on a FIFO with no writer) is stopped at the deadline
 * with the others (timed_out, and the status the signal); with the
 * posix_spawn and fork backends each exec is waited for first, unbounded. With io NULL, the caller's
 * ends of FL_PIPE streams are closed at once, since nothing could reach
 * them: the first stage reads EOF, and a stage writing to an output pipe
 * gets EPIPE (SIGPIPE); a pty's master is closed too, which hangs its
 * terminal up. No stage is left running or unreaped, whatever
 * fails. Returns fl_pipeline_spawn()'s errors, or fl_pipeline_communicate()'s
 * (fl_pipeline_wait()'s with io NULL; *error filled with that errno, step
 * FL_STEP_NONE: the stages did start). Thread-safe: any number of threads
 * may run pipelines at once. Not a cancellation point (see fl_run()). Not
 * async-signal-safe. */
FL_API int fl_pipeline_run(const struct fl_cmd *stages, size_t n,
                           const struct fl_io *io, struct fl_result *results,
                           struct fl_error *error);

/* Closes every stage's handle and frees pl->procs, and empties *pl; see
 * fl_close(): it neither kills nor waits. Safe twice, on a zero struct
 * and on NULL. Thread-safe for different pipelines; not
 * async-signal-safe (it frees). */
FL_API void fl_pipeline_close(struct fl_pipeline *pl);

/*
 * The stage whose status a shell's `set -o pipefail` reports: the
 * rightmost one that did not exit 0, or -1 when all did. A stage whose
 * status was lost (exit_code -1, signal 0) did not exit 0. A stage killed by
 * SIGPIPE counts as failed, as in bash (`yes | head -1` fails with 141
 * there too): test results[k].signal == SIGPIPE to treat an upstream
 * stage that lost its reader as a success. Thread-safe and
 * async-signal-safe.
 */
FL_API int fl_pipefail(const struct fl_result *results, size_t n);

#ifdef __cplusplus
}
#endif

#endif
