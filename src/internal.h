/* internal.h: what the stages of a spawn hand to each other.
 *
 *   cmd.c     describe: check the caller's struct fl_cmd, build the envp
 *   plan.c    prepare: PATH candidates, argument sizes, fd plan, pipes
 *   child.c   the child: raw syscalls from the plan, then exec
 *   spawn*.c  the backends that start the child
 *   launch.c  FL_NO_WAIT_EXEC: a launch's record, the stack pool, the exec word
 *   proc.c    own the process: wait, kill, close
 *   stop.c    a stop policy in motion: signal, grace, SIGKILL, group, cgroup
 *   wait.c    waiting with a deadline into a struct fl_result
 *   pipeline.c  a | b | c: stages joined by pipes in one process group
 *   split.c   a command line to argv, refusing what only a shell would do
 *   pty.c     pseudo-terminals, the controlling terminal, the foreground
 *   io.c      the exchange: input in, outputs out, a deadline, the reap
 *   run.c     fl_communicate() and fl_run() over the exchange
 *   sink.c    where one output goes: callback, lines, buffer, ring
 */
#ifndef FL_INTERNAL_H
#define FL_INTERNAL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "forkless.h"

#define FL__HIDDEN __attribute__((visibility("hidden")))

/* FL_FOREGROUND: the terminal's foreground group before a spawn (0: not
 * known), and that terminal's device number (TIOCGDEV; 0: not known). */
struct fl__foreground {
    pid_t pgrp;
    unsigned dev;
};

/* One thing the child does to its fd table, in order. */
enum fl__act_kind {
    FL__ACT_DUP,    /* dup src_fd onto child_fd (or clear FD_CLOEXEC if equal) */
    FL__ACT_OPEN,   /* open path onto child_fd */
};

struct fl__act {
    enum fl__act_kind kind;
    int child_fd;
    int src_fd;        /* DUP: the parent's fd; OPEN: the one its path reopens, or -1 */
    int staged_fd;     /* DUP: the copy out of every target's way (fl__dup_aside) */
    const char *path;  /* OPEN */
    int oflags;        /* OPEN */
    mode_t mode;       /* OPEN */
};

/* What the child reports when a step fails. Under CLONE_VM it writes here
 * directly; the fork backend sends it through a pipe. */
struct fl__child_err {
    int err;
    int step;
    int index;
    unsigned not_applied;   /* fl_sched.best_effort settings that failed */
    /* Bit i: candidate i's format was refused and FL_SHELL_FALLBACK's
     * /bin/sh then failed to exec (the first 64): the errno is the
     * shell's, and the detail must say so. */
    uint64_t shell_failed;
};

/* What the child needs of .contain and .sched (contain_plan.c), in one
 * block that the plan owns: the caller's strings and arrays are copied
 * in, so a launch's child (FL_NO_WAIT_EXEC) reads nothing of the
 * caller's, and the child reads only this. */
struct fl__box {
    uint64_t ns_clone;       /* CLONE_NEW* flags for the clone */
    uint64_t ns_unshare;     /* made with unshare() in the child instead */
    unsigned flags;          /* fl_contain.flags */
    bool cgroup_ns_late;     /* unshare CLONE_NEWCGROUP after the cgroup write */
    bool map;                /* write uid_map and gid_map */
    char uid_map[48], gid_map[48];
    size_t uid_map_len, gid_map_len;
    const char *hostname;    /* NULL: none */
    size_t hostname_len;
    const char *chroot;
    const char *proc_target; /* FL_MOUNT_PROC: where, seen from outside, else NULL */
    uint64_t cap_bounding, cap_ambient;
    const void *seccomp;     /* a struct sock_fprog in this block, or NULL */
    int landlock_fd;         /* the ruleset, else -1 */
    bool landlock_fd_closed; /* by a launch's parent, once its child had a copy */
    unsigned landlock_unenforced;
    unsigned sched_set, sched_best_effort;
    const void *cpus;
    size_t cpus_size;
    int nice, ioprio;
    char oom_score_adj[16];
    size_t oom_score_adj_len;
};

#define FL__INLINE_ACTS 8

/* Signals 1-31 as bits 0-30; the rest of a uint64_t is the real-time ones. */
#define FL__LOW_SIGNALS 0x7fffffffULL
#define FL__SIG_BIT(sig) ((uint64_t)1 << ((sig) - 1))
#ifdef SIGSTKFLT
#define FL__SIG_STKFLT FL__SIG_BIT(SIGSTKFLT)
#else
#define FL__SIG_STKFLT 0
#endif
#ifdef SIGPWR
#define FL__SIG_PWR FL__SIG_BIT(SIGPWR)
#else
#define FL__SIG_PWR 0
#endif
/* Signals whose default action ends the process without a core dump, the
 * real-time ones (32 to 64) included: a child resets these before its
 * setup, the others after it (child.c). */
#define FL__ENDING_SIGNALS                                                                   \
    (FL__SIG_BIT(SIGHUP) | FL__SIG_BIT(SIGINT) | FL__SIG_BIT(SIGUSR1) | FL__SIG_BIT(SIGUSR2) | \
     FL__SIG_BIT(SIGPIPE) | FL__SIG_BIT(SIGALRM) | FL__SIG_BIT(SIGTERM) | FL__SIG_STKFLT |     \
     FL__SIG_BIT(SIGVTALRM) | FL__SIG_BIT(SIGPROF) | FL__SIG_BIT(SIGIO) | FL__SIG_PWR |        \
     ~(uint64_t)0 << 31)

/* The signals that stop a process by default (SIGSTOP aside, which
 * cannot be caught or ignored). */
#define FL__STOP_SIGNALS (FL__SIG_BIT(SIGTSTP) | FL__SIG_BIT(SIGTTIN) | FL__SIG_BIT(SIGTTOU))

/* Everything the child needs, built in the parent so the child only makes
 * system calls. */
struct fl__plan {
    const struct fl_cmd *cmd;
    unsigned flags;

    /* exec */
    char *const *argv;
    char **envp;            /* owned when envp_owned */
    bool envp_owned;
    const char *const *cands;   /* paths to try, in order */
    size_t ncands;
    bool searched;          /* the candidates come from a PATH search */
    /* A launch's: the caller's cwd when it launched (NULL: not asked for,
     * or unknown), which a relative name was the child's from; the caller
     * may have moved before the failure is explained. */
    char *launch_cwd;
    bool in_callers_root;   /* fl_resolve()'s: the files are the caller's,
                             * whatever .chroot says */
    bool own_root;          /* .contain->chroot was set: a launch's caller
                             * may have freed .contain by its settle */
    bool sizes_measured;    /* arg_bytes to long_index are set (measure_sizes()) */
    int program_fd;         /* the caller's fd N that the program's name,
                             * /dev/fd/N, reopens, or -1 */
    const char *cand_inline[1];
    char *cand_block;       /* owned: the candidates' array and strings */
    /* Written by the clone child as its search goes: the errno each
     * candidate's exec gave, where it means "not here" (in cand_block, or
     * cand_err_inline for a program named with '/'). */
    unsigned char *cand_err;
    unsigned char cand_err_inline[1];
    char **sh_argv;         /* FL_SHELL_FALLBACK: {"/bin/sh", cand, argv[1..]} */
    size_t arg_bytes;       /* what exec counts of argv and envp: strings, pointers */
    size_t arg_limit;       /* the most exec takes, with the file name too */
    /* The first string longer than MAX_ARG_STRLEN: in argv (0) or envp
     * (1) at long_index, long_len bytes; long_name: an environment
     * string's name, cut at 64 bytes. Kept here, not read again, since
     * the string may be gone by the time an E2BIG is explained (a
     * fork()'s atfork handler may setenv() it, which musl frees).
     * long_list -1: none. */
    int long_list;
    size_t long_index, long_len;
    char long_name[65];
    /* Written by the clone child when its exec says E2BIG (or before its
     * seccomp filter): its RLIMIT_STACK soft limit, which sets exec's
     * limit on the lists (the caller's may have changed before a launch's
     * failure is explained). */
    bool e2big_stack_known;
    uint64_t e2big_stack;
    /* Written by the clone child of a PATH search under a seccomp filter,
     * before the filter: bit i set when candidate i is there (stat), for
     * the first 64; the search's "not here" needs it after the filter,
     * where no call but exec may be made. */
    bool presence_noted;
    uint64_t cand_present;

    /* fds */
    struct fl__act *acts;
    size_t nacts;
    struct fl__act act_inline[FL__INLINE_ACTS];
    bool stage;             /* move every DUP source out of the way first */
    int stage_min;          /* the lowest fd a staged copy may take */
    int walk_dir;           /* child: /proc/self/fd, opened before a
                             * chroot for close_by_walk(); else -1 */
    int *keep;              /* sorted child fds >= 3 that survive closing */
    size_t nkeep;
    int keep_inline[FL__INLINE_ACTS + 1];
    /* A launch's child: the sorted fds from 3 up that it reads before
     * its dups (sources, the ruleset, the terminal's), which it keeps
     * while it drops the rest at once (fl__plan_hold()). */
    int *hold;
    size_t nhold;
    int hold_inline[FL__INLINE_ACTS + 3];
    int pipe_parent[3];     /* the parent's pipe ends, -1 if none */
    int pipe_child[3];      /* the child's pipe ends (or, under .contain's
                               chroot, its FL_NULL's /dev/null), closed
                               after the spawn */

    /* signals */
    sigset_t child_mask;
    uint64_t sigdefault_bits;   /* signal n is bit n-1 */
    uint64_t sigignore_bits;
    uint64_t rt_ignored;        /* real-time signals the parent ignores */
    /* A spawn's stop signals the caller handles, where the child reads no
     * stat to learn them (see hold_off_stops() in child.c); and the ones
     * the child ignores through its setup (the child's). */
    uint64_t stops_caught;
    uint64_t stops_held;
    int stat_fd;                /* the process's stat in /proc for the
                                   child to read (ignored_signals.c), or -1 */
    pid_t stat_pid;             /* ... the pid it belongs to */
    bool sighand_cleared;       /* clone3(CLONE_CLEAR_SIGHAND) reset handlers */
    bool mask_inherited;        /* the child already has the mask it needs */
    /* A launch's child starts with every signal blocked: setup_mask is the
     * caller's mask, which it takes once the signals that end a process
     * are reset (child.c). */
    sigset_t setup_mask;
    bool setup_mask_set;
    /* Child: bit i set when .rlimits[i] lowers its soft limit, so that
     * set_rlimits() leaves it to its second round (child.c). */
    uint64_t rlimits_late;
    /* A spawn's clone3() child starts with the caller's mask: the signals
     * that end a process which its final mask leaves unblocked, unblocked
     * before the setup (spawn_clone.c). */
    uint64_t ending_unblock;

    /* the rest of the setup */
    const char *cgroup_procs;   /* owned: "<cgroup>/cgroup.procs" */
    int cgroup_fd;              /* clone3 CLONE_INTO_CGROUP, else -1 */
    pid_t parent_pid, parent_tid;   /* .pdeathsig: the spawning thread's */
    int err_fd;                 /* the fork backend's error pipe, else -1 */
    bool files_shared;          /* clone3 CLONE_FILES: the child starts on the
                                   caller's fd table and copies part of it */
    bool files_unshare_failed;  /* ... and could not: spawn again without */
    bool child_ran;             /* the child's first store: it got to run */

    /* terminals (pty.c) */
    int pty_master;             /* FL_PTY: the parent's side, else -1 */
    int pty_slave;              /* FL_PTY: the child's, closed after the spawn */
    int ctty_fd;                /* the child fd for TIOCSCTTY, else -1 */
    int fg_fd;                  /* FL_FOREGROUND: the child fd for TIOCSPGRP, else -1 */
    struct fl__foreground fg_before;  /* ... who had the terminal before (pty.c) */

    /* FL_NO_WAIT_EXEC with the clone backend (launch.c): the child runs
     * without CLONE_VFORK on launch_stack, and the kernel clears
     * *exec_word at its exec or exit (CLONE_CHILD_CLEARTID). NULL for a
     * spawn that waits. Once the child runs, the parent writes nothing
     * of this plan that the child reads. */
    char *launch_stack;
    uint32_t *exec_word;
    /* A launch whose caller goes on (not fl_run()'s, nor a pipeline's
     * stage, whose callers wait for the exec): its child yields its CPU
     * first (see fl__child_run()). */
    bool yield_first;
    /* The parent's PR_GET_DUMPABLE before a clone whose child changes
     * credentials (FL_SET_UID, FL_SET_GID), restored once the child has
     * exec'd or failed (see fl__dumpable_save()); -1: none to restore,
     * else the child is counted among those pending, in the count of
     * dumpable_generation (a fork() child starts another). The parent's
     * only: the child never reads them. */
    int parent_dumpable;
    unsigned dumpable_generation;

    /* .contain and .sched (contain_plan.c); NULL when neither sets
     * anything. */
    struct fl__box *box;

    struct fl__child_err cerr;
};

/* cmd.c */
FL__HIDDEN int fl__cmd_check(const struct fl_cmd *cmd, struct fl_error *e);
FL__HIDDEN int fl__env_build(const struct fl_cmd *cmd, struct fl__plan *p,
                             struct fl_error *e);
FL__HIDDEN const char *fl__env_get(char *const *envp, const char *name);

/* plan.c */
FL__HIDDEN int fl__plan_init(struct fl__plan *p, const struct fl_cmd *cmd,
                             struct fl_error *e);
FL__HIDDEN void fl__plan_free(struct fl__plan *p);
FL__HIDDEN int fl__plan_pipes(struct fl__plan *p, struct fl_error *e);
FL__HIDDEN void fl__plan_close_child_ends(struct fl__plan *p);
FL__HIDDEN void fl__plan_close_parent_ends(struct fl__plan *p);
FL__HIDDEN int fl__plan_max_fd(const struct fl__plan *p);
/* Fills p->hold for a launch; ENOMEM (e filled) or 0. */
FL__HIDDEN int fl__plan_hold(struct fl__plan *p, struct fl_error *e);
FL__HIDDEN const char *fl__program(const struct fl_cmd *cmd);
/* Whether exec of cand would refuse the lists with E2BIG (the total over
 * ARG_MAX); if so, detail says how far over. */
FL__HIDDEN bool fl__args_too_big(struct fl__plan *p, const char *cand,
                                 char *detail, size_t size);
/* Why would chdir(cwd) fail, seen from the caller? 0 if it would not. */
FL__HIDDEN int fl__cwd_error(const char *cwd);
/* 0 if cand is a regular file the caller may execute, else what its exec
 * would say: an error fl__not_here() accepts (the file, or in a PATH
 * search a directory we may not search, or a #! interpreter or loader,
 * missing), EACCES, ENOEXEC (a #! line the kernel will not read, without
 * FL_SHELL_FALLBACK) or another errno. *there says whether the file
 * itself is there; path receives the name, made relative to the command's
 * cwd. */
FL__HIDDEN int fl__candidate_status(struct fl__plan *p, const char *cand,
                                    char *path, size_t size, bool *there);
/* The kernel's buffer for a file's first bytes (BINPRM_BUF_SIZE). */
#define FL__BINPRM_BUF_SIZE 256
/* What exec makes of the file at path (exec_format.c): its #! line, or
 * the loader an ELF program names. */
enum fl__shebang {
    FL__SHEBANG_NONE,      /* no "#!" and no loader, or the file cannot be
                              read */
    FL__SHEBANG_INTERP,    /* interp is set: the first word after "#!", up to
                              a blank or the line's end (a '\r' stays in it) */
    FL__SHEBANG_EMPTY,     /* "#!" and blanks to the file's end: exec opens "",
                              the cwd, and says EACCES */
    FL__SHEBANG_NO_NAME,   /* "#!" and blanks to the line's end: ENOEXEC */
    FL__SHEBANG_TOO_LONG,  /* the name does not end within the file's first
                              255 bytes, the kernel's buffer: ENOEXEC */
    FL__SHEBANG_LOADER,    /* an ELF program of this machine: interp is the
                              program interpreter it names (PT_INTERP), which
                              exec opens as it would a script's, from the
                              cwd when relative, and never follows further */
};
/* Scripts exec runs, each the interpreter of the one before, before it
 * says ELOOP: exec_binprm()'s depth in Linux 5.x and 6.x. The sixth
 * script's interpreter is still looked up, and a failed lookup is what
 * exec says. */
#define FL__SCRIPT_DEPTH_MAX 5
FL__HIDDEN enum fl__shebang fl__shebang_at(int dir, const char *path,
                                           char interp[FL__BINPRM_BUF_SIZE]);
static inline enum fl__shebang fl__shebang(const char *path, char interp[FL__BINPRM_BUF_SIZE])
{
    return fl__shebang_at(AT_FDCWD, path, interp);
}

/* contain_plan.c: checks .contain and .sched (0 or EINVAL), then fills
 * p->box; landlock.c builds the ruleset for it. */
FL__HIDDEN int fl__contain_check(const struct fl_cmd *cmd, struct fl_error *e);
FL__HIDDEN int fl__plan_box(struct fl__plan *p, struct fl_error *e);
/* A launch's parent, once the child has its own fd table: closes the
 * ruleset there, which the child still reads by its number. */
FL__HIDDEN void fl__box_close_in_parent(struct fl__box *b);
FL__HIDDEN void fl__box_free(struct fl__box *b);
/* The namespaces to make at clone time, from a backend about to clone:
 * all of .unshare's but the cgroup one when the child is to write itself
 * into its cgroup (no CLONE_INTO_CGROUP), which it then unshares after
 * the move (fl__child_cgroup_ns()). */
FL__HIDDEN uint64_t fl__box_clone_flags(struct fl__plan *p);
/* The name of an FL_NS_* bit, as /proc/self/ns says it ("net", "mnt"). */
FL__HIDDEN const char *fl__ns_name(unsigned ns);
/* The detail of a clone that failed with err: call, or, for an errno that
 * new namespaces cause (EPERM, EINVAL, ENOSPC, EUSERS), call and the
 * namespaces ns (the CLONE_NEW* flags it was given), in buf. */
FL__HIDDEN const char *fl__clone_detail(uint64_t ns, int err, const char *call, char *buf,
                                        size_t size);
/* Is anything of .contain, or of .contain or .sched, set? */
FL__HIDDEN bool fl__contain_set(const struct fl_contain *c);
FL__HIDDEN bool fl__contained(const struct fl_cmd *cmd);
/* The ruleset for .contain->landlock into b (b->landlock_fd, and
 * b->landlock_unenforced): 0 or an errno, with e filled. */
FL__HIDDEN int fl__landlock_build(const struct fl_contain *c, struct fl__box *b,
                                  struct fl_error *e);

/* contain.c: the child's steps for the box, each 0 or -1 with p->cerr
 * filled (child.c runs them in the documented order). */
FL__HIDDEN int fl__child_enter_ns(struct fl__plan *p);
FL__HIDDEN int fl__child_cgroup_ns(struct fl__plan *p);
FL__HIDDEN int fl__child_sched(struct fl__plan *p);
FL__HIDDEN int fl__child_root(struct fl__plan *p);
FL__HIDDEN int fl__child_caps_before(struct fl__plan *p);
FL__HIDDEN int fl__child_caps_after(struct fl__plan *p);
FL__HIDDEN int fl__child_lock(struct fl__plan *p);
FL__HIDDEN int fl__child_seccomp(struct fl__plan *p);
FL__HIDDEN int fl__child_fail(struct fl__plan *p, enum fl_step step, int index, long r);
/* The exec errors after which a search tries its next candidate, as
 * execvp() does: the file is not there, or a #! interpreter or an ELF
 * loader it names is not. */
static inline bool fl__not_here(int err)
{
    return err == ENOENT || err == ENOTDIR || err == ESTALE || err == ENODEV || err == ETIMEDOUT;
}

/* How a search where no candidate ran ends, the same in the clone child,
 * fl_resolve() and the posix_spawn backend's pick: EACCES for the first
 * file found without permission; else the first candidate that is there
 * (present, or -1; a program named with '/' is its one candidate, there or
 * not), with the error its exec gave (present_err): its #! interpreter or
 * loader is missing; else "not found in PATH" (ENOENT, index -1), not a
 * path in a directory that may not even be searchable. Pure: the clone
 * child calls it. */
static inline struct fl__child_err fl__search_failed(int denied, int present, int present_err)
{
    if (denied >= 0)
        return (struct fl__child_err){ .err = EACCES, .step = FL_STEP_EXEC, .index = denied };
    if (present >= 0)
        return (struct fl__child_err){ .err = present_err, .step = FL_STEP_EXEC, .index = present };
    return (struct fl__child_err){ .err = ENOENT, .step = FL_STEP_EXEC, .index = -1 };
}

/* pty.c. Checks .tty and the terminal flags: 0, EINVAL, or EBADF for a
 * terminal fd the child would inherit that the caller has not open. */
FL__HIDDEN int fl__tty_check(const struct fl_cmd *cmd, struct fl_error *e);
/* cmd.c: whether fd is an open fd of the caller's (not the library's). */
FL__HIDDEN bool fl__caller_fd_open(int fd);
/* The fd above 2 that an absolute name such as /dev/fd/N reopens, or -1. */
FL__HIDDEN int fl__fd_the_path_names(const char *path);
/* spawn_posix.c: whether posix_spawn can do FL_FOREGROUND (glibc 2.35). */
FL__HIDDEN bool fl__posix_spawn_foreground(void);
/* Opens the pty of FL_PTY streams and sets it up, and fills the plan's
 * terminal fields (the flags the terminal steps imply among them). */
FL__HIDDEN int fl__plan_tty(struct fl__plan *p, struct fl_error *e);
/* Before a spawn with FL_FOREGROUND: which group has the terminal. */
FL__HIDDEN void fl__tty_note_foreground(struct fl__plan *p);
/* The same for a pipeline, whose stages' plans are gone by the time it
 * fails: through /dev/tty. */
FL__HIDDEN void fl__foreground_note(struct fl__foreground *before);
FL__HIDDEN void fl__foreground_give_back(const struct fl__foreground *before);
/* After a failed spawn with FL_FOREGROUND: the child may have made its
 * group the terminal's foreground one before the step that failed; if
 * the terminal's foreground group has no process left, it goes back to the
 * group that had it before, else to the caller's. Never from a live group:
 * another job's, or the one of FL_JOIN_PGROUP. Keeps errno. */
FL__HIDDEN void fl__tty_give_back(const struct fl__plan *p);
/* Is the child's fd (0-2) set by an fd map rather than by .stdio? */
FL__HIDDEN bool fl__stdio_mapped(const struct fl_cmd *cmd, int fd);

/* child.c: returns only on failure, with p->cerr filled. */
FL__HIDDEN void fl__child_run(struct fl__plan *p);
FL__HIDDEN __attribute__((noreturn)) void fl__child_exit(int code);
/* A FD_CLOEXEC copy of fd at a number that no fd action targets, or
 * -errno. Raw system calls only: the child and the parent both use it. */
FL__HIDDEN long fl__dup_aside(const struct fl__plan *p, int fd);
/* Is fd the number an fd action sets in the child? Raw, like the above. */
FL__HIDDEN bool fl__is_target(const struct fl__plan *p, long fd);
/* The clone backend's entry: runs the child, exits 127 on failure. */
FL__HIDDEN int fl__child_entry(void *plan);

/* Does cmd ask for a session of its own, with a terminal of its own
 * (FL_PTY on a stream, FL_SETCTTY)? The checks refuse what such a child
 * could not do (join a group, be a later stage of a pipeline). */
/* The first of fds 0-2 that gets a pty, or -1: an fd map overrides an
 * FL_PTY stream, and no pty is opened for it then. */
static inline int fl__pty_stream(const struct fl_cmd *c)
{
    for (int i = 0; i < 3; i++)
        if (c->stdio[i].kind == FL_PTY && !fl__stdio_mapped(c, i))
            return i;
    return -1;
}

/* Of two .rlimits entries for one resource only the last is set: is
 * entry i one that a later entry overrides? */
static inline bool fl__rlimit_overridden(const struct fl_cmd *c, size_t i)
{
    for (size_t k = i + 1; k < c->nrlimits; k++)
        if (c->rlimits[k].resource == c->rlimits[i].resource)
            return true;
    return false;
}

static inline bool fl__own_session(const struct fl_cmd *c)
{
    return fl__pty_stream(c) >= 0 || (c->flags & FL_SETCTTY);
}

/* Does cmd's child lead a process group of its own (its id the child's
 * pid)? FL_FOREGROUND makes one unless it joins another; a pty makes a
 * session. */
static inline bool fl__leads_group(const struct fl_cmd *c)
{
    return fl__pty_stream(c) >= 0 || (c->flags & (FL_NEW_PGROUP | FL_SETSID | FL_SETCTTY)) ||
           (c->flags & (FL_FOREGROUND | FL_JOIN_PGROUP)) == FL_FOREGROUND;
}

/* backends: 0 or an errno value; on failure e is filled and nothing of the
 * child is left. */
/* Under CLONE_VM the child's setresuid()/setresgid() makes the shared mm,
 * the parent's, non-dumpable (commit_creds() calls set_dumpable() on
 * it). Before the clone of a child that changes credentials, _save()
 * counts the child and notes the caller's setting from before the first
 * of those pending; once that child has exec'd or failed, _restore()
 * puts it back if no other is pending (any thread's spawn or launch). */
FL__HIDDEN void fl__dumpable_save(struct fl__plan *p);
FL__HIDDEN void fl__dumpable_restore(struct fl__plan *p);
FL__HIDDEN int fl__spawn_clone(struct fl__plan *p, struct fl_proc *proc,
                               struct fl_error *e);
/* fl_spawn() for a caller that waits for the exec before it goes on
 * (fl_run(), a pipeline's stage): the same, but a launched child does not
 * yield its CPU first (see yield_first). */
FL__HIDDEN int fl__spawn_waited(const struct fl_cmd *cmd, struct fl_proc *proc,
                                struct fl_error *error);
FL__HIDDEN int fl__spawn_posix(struct fl__plan *p, struct fl_proc *proc,
                               struct fl_error *e);
FL__HIDDEN int fl__spawn_fork(struct fl__plan *p, struct fl_proc *proc,
                              struct fl_error *e);
FL__HIDDEN void fl__block_signals(sigset_t *old);
FL__HIDDEN void fl__restore_signals(const sigset_t *old);
FL__HIDDEN void fl__child_mask(struct fl__plan *p, const sigset_t *parent_mask);
FL__HIDDEN uint64_t fl__sigset_bits(const sigset_t *set);
FL__HIDDEN void fl__reap(pid_t pid, int pidfd);
/* waitid(P_PIDFD)'s -errno r says that the call itself is refused, not
 * that the process is not there: EINVAL from a kernel before 5.4 (no
 * P_PIDFD), ENOSYS or EPERM from a seccomp filter of the caller's (as
 * container profiles answer calls they do not know). The pid is asked
 * instead, where fl__pid_names_pidfd() says it still names the process. */
static inline bool fl__pidfd_wait_refused(long r)
{
    return r == -EINVAL || r == -ENOSYS || r == -EPERM;
}
FL__HIDDEN bool fl__clone_vm_works(void);
/* The backend a spawn of cmd uses: cmd->backend, or for FL_BACKEND_AUTO
 * the clone backend where CLONE_VM works here, else fork. */
FL__HIDDEN enum fl_backend fl__backend_of(const struct fl_cmd *cmd);
/* glibc 2.32 and later: false once a second thread was ever made. Absent
 * from musl, which says nothing. */
extern char __libc_single_threaded __attribute__((weak));
/* True only where the libc says this process never had a second thread. */
static inline bool fl__known_single_threaded(void)
{
    return &__libc_single_threaded && __libc_single_threaded;
}
/* ignored_signals.c: this process's own /proc/<pid>/task/<pid>/stat, open for a
 * CLONE_VFORK child to read its ignored signals from, and in *pid the pid
 * it belongs to; -1 when there is none to be had. */
FL__HIDDEN int fl__ignored_signals_fd(pid_t *pid);
/* Closes it when fd is still that one, and opens none for a while: the
 * process is out of fds, and a spawn needs the slot more. */
FL__HIDDEN void fl__ignored_signals_release(int fd);
/* Whether fd is the stat fd the library keeps (not the caller's). */
FL__HIDDEN bool fl__ignored_signals_holds(int fd);
/* Closes it and opens none ever again: clone3() is not usable here, and
 * clone()'s child resets every signal without reading. */
FL__HIDDEN void fl__ignored_signals_give_up(void);
/* The child's frames are small (the deepest holds a 1 KiB getdents
 * buffer); 16 KiB leaves ample room. */
#define FL__CHILD_STACK_SIZE (16 * 1024)
/* A child stack with a guard page below: its lowest usable address, or
 * NULL. */
FL__HIDDEN char *fl__map_stack(void);
FL__HIDDEN void fl__unmap_stack(void *base);

/* proc.c. fl_proc.state_ once the process is reaped (or lost). */
#define FL__PROC_REAPED 1
/* fl_proc.state_ of one not yet reaped that was started leading a group
 * of its own (fl__leads_group()): it may have left it since, but the
 * group keeps its id, the pid, which is reserved until the reap. */
#define FL__PROC_LEADS_GROUP 2
/* A wait status from waitid()'s siginfo. */
FL__HIDDEN int fl__status_of(const siginfo_t *si);
/* Waits until fd is readable or timeout_ms (-1: for ever) runs out:
 * 0, ETIMEDOUT, EBADF (POLLNVAL), or poll()'s errno. EINTR restarts with
 * the time left. */
FL__HIDDEN int fl__wait_readable(int fd, int timeout_ms);
/* A pidfd to poll for p's end: *fd is p->pidfd, or one borrowed with
 * pidfd_open() that the caller closes (*fd != p->pidfd). Returns 0,
 * ECHILD (not our child any more), or ENOSYS (no pidfd_open: the caller
 * must look with waitid(WNOHANG | WNOWAIT)). */
FL__HIDDEN int fl__proc_pollfd(const struct fl_proc *p, int *fd);
/* The pidfs inode number of pidfd's process (Linux 6.9), or 0 where
 * pidfds are anonymous inodes. errno kept. */
FL__HIDDEN unsigned long long fl__pidfd_ident(int pidfd);
/* For a handle without a pidfd, just after the start: its process's
 * identity (proc->ident_), read through a pidfd opened for the moment. */
FL__HIDDEN void fl__proc_identify(struct fl_proc *p);
/* Fills p for a process just started: pidfd, the one the start made with
 * it or -1. With no_pidfd (FL_NO_PIDFD) that one only gives the process's
 * number and is closed; without, where there is none, one is opened by
 * pid, and kept if the pid is still our child. */
FL__HIDDEN void fl__proc_adopt(struct fl_proc *p, pid_t pid, int pidfd, bool no_pidfd);
/* A pidfd of the process of a handle without one, opened now, that the
 * caller closes. Where the handle knows its process's identity, checked:
 * -ESRCH when the pid names no process or a later one; -ENOSYS when
 * none could be opened (no fd left, no pidfd_open) or checked, so that
 * the caller falls back on the pid. Raw system calls only; errno kept. */
FL__HIDDEN int fl__proc_borrow_pidfd(const struct fl_proc *p);
/* Still our child, not reaped (by us or by anyone else): its pid, and the
 * group it leads, are then reserved. Raw system calls only. */
FL__HIDDEN bool fl__proc_unreaped(const struct fl_proc *p);
/* Does pid still name the process behind pidfd? A pidfd does not keep its
 * process's number: reaped elsewhere, the number is free for another
 * child of ours. 1 where it does (the process is there, a zombie too,
 * whose number stays reserved); 0 where the process is found reaped, or
 * the number another's; FL__NOT_A_PIDFD; -1 where nothing can tell (pidfd_send_signal()
 * refused, and pidfd_open() too or no pidfs before Linux 6.9): the caller
 * must then not take the pid's process for the pidfd's beyond what it
 * sees of it. No libc call but fstat() and fstatfs(); errno kept. */
FL__HIDDEN int fl__pid_names_pidfd(int pidfd, pid_t pid);
/* The state letter of /proc/<pid>/stat ('R', 'S', 'T', 'Z', ...), or 0
 * where it cannot be read. Raw system calls only. */
FL__HIDDEN char fl__pid_state(pid_t pid);
/* fl__pid_names_pidfd()'s answer for a pidfd that is no pidfd (closed or
 * replaced behind the handle's back): EBADF for the caller. */
#define FL__NOT_A_PIDFD (-2)
/* How fl__reap_proc() finds p's end. */
enum fl__reap_wait {
    FL__REAP_ENDED,    /* p has ended (or the reap blocks, uncancellable) */
    FL__REAP_WAIT,     /* wait for the end: a cancellation point that reaps
                        * nothing, then the reap */
    FL__REAP_LOOK,     /* as FL__REAP_WAIT, after a look whether p has ended
                        * already (a launch waited for after other work) */
};
/* Reaps pid through pidfd, as fl__reap_proc() does; where waitid(P_PIDFD)
 * is refused, by pid as fl__pid_names_pidfd() allows. 0 or -errno. */
FL__HIDDEN long fl__reap_by_pidfd(pid_t pid, int pidfd, siginfo_t *si, struct rusage *ru,
                                  enum fl__reap_wait how);
/* Reaps p with its rusage (ru may be NULL). 0 or an errno; 0 and ECHILD
 * mark the handle reaped. */
FL__HIDDEN int fl__reap_proc(struct fl_proc *p, siginfo_t *si, struct rusage *ru,
                             enum fl__reap_wait how);

/* stop.c: a stop policy in motion over n processes. With FL_STOP_GROUP,
 * procs[0] leads the group. Nothing here reaps: the caller reaps only
 * after fl__stop_finish(), so that the group's id stays reserved. */
struct fl__stopper {
    struct fl_proc *procs;
    size_t n;
    int signal;
    int grace_ms;
    enum fl_stop_scope scope;
    const char *cgroup;
    int phase;
    long long kill_at_ns;   /* SIGKILL is due then; -1: never */
    int stop_signal;        /* sent, for the result */
    bool killed;
    bool rest_killed;       /* the last SIGKILL reached the group or cgroup */
    pid_t rest_seen;        /* a running member of the group seen last; 0: none */
};
/* Checks the policy (NULL: all zero) and resolves its defaults: 0 or
 * EINVAL. default_cgroup stands in for a NULL .cgroup. */
FL__HIDDEN int fl__stop_init(struct fl__stopper *s, struct fl_proc *procs, size_t n,
                             const struct fl_stop_policy *policy,
                             const char *default_cgroup);
/* fl__stop_init() before there are processes: FL_STOP_GROUP is taken as
 * good (whether the leader leads is for the caller to know). */
FL__HIDDEN int fl__stop_check(const struct fl_stop_policy *policy,
                              const char *default_cgroup);
/* The first signal, now (and SIGCONT). Once only. */
FL__HIDDEN void fl__stop_begin(struct fl__stopper *s);
FL__HIDDEN bool fl__stop_started(const struct fl__stopper *s);
/* Until when the rest of a group or cgroup that the stop reaches has its
 * grace (fl__stop_finish() waits for it so long): a time in ns, or -1 (no
 * stop of a group under way, or one that never kills). */
FL__HIDDEN long long fl__stop_rest_until_ns(const struct fl__stopper *s);
/* Is anything the stop reaches still running, beyond the processes
 * themselves (which have ended): the rest of the group or the cgroup?
 * 1 or 0; -1 when it cannot tell (no /proc of this pid namespace), and
 * 0 for FL_STOP_PROCESS. */
FL__HIDDEN int fl__stop_rest_running(struct fl__stopper *s);
/* Did the stop's SIGKILL reach the group or the cgroup, whose rest may
 * then still be on its way out? */
FL__HIDDEN bool fl__stop_killed_rest(const struct fl__stopper *s);
/* wait_ms (-1: for ever) cut to the time left before SIGKILL is due. */
FL__HIDDEN int fl__stop_clip_ms(const struct fl__stopper *s, int wait_ms);
/* SIGKILL now, to all it reaches, whatever the phase. */
FL__HIDDEN void fl__stop_kill_now(struct fl__stopper *s);
/* Sends SIGKILL once it is due. Call after every wake-up. */
FL__HIDDEN void fl__stop_tick(struct fl__stopper *s);
/* Every process has ended (unreaped): with a group or a cgroup, waits for
 * the rest of it up to the SIGKILL deadline, then kills what is left. */
FL__HIDDEN void fl__stop_finish(struct fl__stopper *s);
/* Copies stop_signal and killed into r. */
FL__HIDDEN void fl__stop_record(const struct fl__stopper *s, struct fl_result *r);

/* wait.c */
/* Waits up to timeout_ms (-1: for ever) for p to end, without reaping;
 * fd from fl__proc_pollfd(), or -1 to look with waitid(WNOWAIT). 0,
 * ETIMEDOUT or an errno. */
FL__HIDDEN int fl__await_end(const struct fl_proc *p, int fd, int timeout_ms);
/* Reaps p into r's process fields (status, exit code, signal, rusage,
 * elapsed time); the others are left as they are. */
FL__HIDDEN int fl__result_reap(struct fl_proc *p, struct fl_result *r);

/* The CLOCK_MONOTONIC time in nanoseconds. */
FL__HIDDEN long long fl__now_ns(void);
/* fl_pipeline_spawn(), but a stage whose setup may wait (an FL_FILE on a
 * FIFO) is waited for only until until_ns (fl__now_ns(); 0: no limit),
 * and then left launched, not finished: the caller's deadline stops it. */
FL__HIDDEN int fl__pipeline_spawn_until(const struct fl_cmd *stages, size_t n,
                                        struct fl_pipeline *pl, struct fl_error *error,
                                        long long until_ns);
/* poll(), but where RLIMIT_NOFILE is below n it waits with select()
 * instead of failing with EINVAL (poll.c). A cancellation point. */
FL__HIDDEN int fl__poll(struct pollfd *fds, nfds_t n, int timeout_ms);


/* sink.c: one output stream's bytes on their way into a struct fl_output.
 * Internal to the exchange; pipeline.c needs only struct fl__stream. */
/* Who owns a buffer of the sink's (and fl_output.owned_). */
enum { FL__OWN_NONE, FL__OWN_MALLOC, FL__OWN_MAP };
struct fl__sink {
    const struct fl_sink *cfg;
    struct fl_output *out;
    int stream;             /* 1 or 2, as on_output is told */
    char *buf;              /* the caller's .buf, or ours when owned */
    size_t cap;             /* bytes of buf, the NUL's included */
    size_t limit;           /* the most bytes kept */
    size_t len;             /* bytes kept */
    size_t head;            /* a full ring: its oldest byte */
    unsigned char owned;    /* FL__OWN_* */
    unsigned long long total;
    bool overflowed;
    char *line;             /* line mode: a line split across reads */
    size_t line_len, line_cap, max_line;
    bool quiet;             /* on_output is not called any more */
    /* Reasons to stop the child, for the exchange to act on. */
    bool nomem, cancelled, overflow_stop;
};
/* 0 or EINVAL: an overflow it does not know, a buffer without a size (or
 * with no room for the NUL, or with .discard, or a limit beyond it),
 * .lines without .on_output, .max_line without .lines. */
FL__HIDDEN int fl__sink_check(const struct fl_sink *cfg);
FL__HIDDEN const char *fl__sink_problem(const struct fl_sink *c);
FL__HIDDEN void fl__sink_init(struct fl__sink *s, const struct fl_sink *cfg, int stream,
                              struct fl_output *out);
/* Hands a chunk to on_output (or its lines), then keeps what the policy
 * keeps; sets nomem, cancelled or overflow_stop as they happen. */
FL__HIDDEN void fl__sink_put(struct fl__sink *s, const char *data, size_t n);
/* Room for the next read straight into the kept bytes (at most want), or
 * 0 when they must go through fl__sink_put(): discarding, past the limit,
 * or no memory. fl__sink_took() then counts and hands on what was read. */
FL__HIDDEN size_t fl__sink_room(struct fl__sink *s, size_t want, char **at);
FL__HIDDEN void fl__sink_took(struct fl__sink *s, size_t n);
FL__HIDDEN bool fl__sink_wants_stop(const struct fl__sink *s);
/* The stream is over: the last partial line to on_output, the ring put in
 * order, the NUL, and *out filled. Once. */
FL__HIDDEN void fl__sink_end(struct fl__sink *s);
/* Frees what fl__sink_end() left in out, as its owner says, and zeroes it. */
FL__HIDDEN void fl__output_free(struct fl_output *out);

/* io.c: the exchange of fl_communicate(), shaped for pipelines too: n
 * processes, each polled by its pidfd, and any number of streams, each a
 * parent's pipe end (input: fed from one buffer; output: into a sink and
 * its struct fl_output) or a pty master (both at once). Build the streams
 * with fl__stream_in(), fl__stream_out() and fl__stream_tty(). */
struct fl__stream {
    int fd;                 /* the parent's end; the exchange owns and closes it */
    bool input;
    /* A pty master (fl__stream_tty()): an output whose end is EIO, and,
     * with .input, the input too, which ends with VEOF, not a close. */
    bool tty;
    bool veof;              /* tty: data is now the VEOFs (input_written is set) */
    bool fed;               /* tty: the input is over */
    char eof[3];            /* tty: the VEOFs */
    bool eio_seen;          /* tty: the last read said EIO; a second in a row is the end */
    long long rest_until_ns;  /* tty: its terminal side closed, left out of poll() until; 0 */
    /* input: what to write, and the result that gets input_written and
     * input_closed */
    const char *data;
    size_t len, done;
    struct fl_result *result;
    /* output */
    struct fl__sink sink;
    unsigned long long grown_at;   /* total when the pipe was last grown */
};
FL__HIDDEN struct fl__stream fl__stream_in(int fd, const struct fl_io *io,
                                           struct fl_result *result);
/* stream is 1 or 2; out is where the sink's result goes (in results[]). */
FL__HIDDEN struct fl__stream fl__stream_out(int fd, int stream, const struct fl_sink *sink,
                                            struct fl_output *out);
/* A pty master: read into io->out[0] (stream 1) and result->out[0]; fed
 * with io->input, then VEOF in canonical mode, when fed. */
FL__HIDDEN struct fl__stream fl__stream_tty(int fd, bool fed, const struct fl_io *io,
                                            struct fl_result *result);
/* Checks an fl_io for what does not depend on the processes: reserved
 * fields, timeout_ms >= 0, eof_wait_ms >= -1, input_len without input,
 * and both sinks. 0 or EINVAL. The stop policy is checked by
 * fl__stop_init(). */
FL__HIDDEN int fl__io_check(const struct fl_io *io);
/* What is wrong with io, in words (in buf or a constant), or NULL. */
FL__HIDDEN const char *fl__io_problem(const struct fl_io *io, char *buf, size_t size);
/*
 * Runs the exchange to its end: feeds the inputs, drains the outputs,
 * until all n processes have ended and every stream is at its end (or
 * io->eof_wait_ms after the last process ended, when a descendant holds an
 * output open: out->eof_missed). io->timeout_ms, counted from the call,
 * starts the stopper (which must be over the same procs), as do a sink's
 * FL_OVERFLOW_STOP, a callback that returns non-zero, and ENOMEM; the
 * outputs are drained meanwhile. Then every process is reaped into
 * results[k] (which are overwritten first: streams may point into them),
 * with timed_out, stop_requested, stop_signal and killed in each.
 *
 * Every stream's fd is closed, whatever happens; the caller must forget
 * them (proc->stdio[k] = -1, proc->pty = -1). procs must be unreaped. SIGPIPE is blocked
 * in the calling thread around writes only. Not a cancellation point: it
 * disables cancellation while it runs. errno is kept.
 *
 * Returns 0, or the first of: an errno of poll(), read(), write() or the
 * reap (ECHILD, ...), ENOMEM, ECANCELED.
 *
 * A pipeline of n stages, for instance (each stdio[] taken is set to -1):
 *     st[ns++] = fl__stream_in(procs[0].stdio[0], io, &results[0]);
 *     st[ns++] = fl__stream_out(procs[n - 1].stdio[1], 1, &io->out[0],
 *                               &results[n - 1].out[0]);
 *     for each stage k with a stderr pipe:
 *         st[ns++] = fl__stream_out(procs[k].stdio[2], 2, &io->out[1],
 *                                   &results[k].out[1]);
 *     fl__stop_init(&stop, procs, n, io->stop, cgroup);  (scope: the group)
 *     return fl__exchange(procs, results, n, st, ns, io, &stop);
 * Two streams must not share one caller's .buf: the bytes would mix, so
 * out[1] with .buf and more than one stderr pipe wants refusing (EINVAL).
 */
FL__HIDDEN int fl__exchange(struct fl_proc *procs, struct fl_result *results, size_t n,
                            struct fl__stream *streams, size_t nstreams,
                            const struct fl_io *io, struct fl__stopper *stop);

/* run.c: makes stream k of c a pipe for fl_run()'s exchange: EINVAL (with
 * e filled) when it is neither FL_INHERIT nor FL_PIPE, or mapped. */
FL__HIDDEN int fl__pipe_stream(struct fl_cmd *c, int k, struct fl_error *e);
/* Is stream k of cmd on its pty (FL_PTY, and no map over it)? Its master
 * carries it: no pipe is made for it. */
FL__HIDDEN bool fl__stream_is_pty(const struct fl_cmd *cmd, int k);

/* pipeline.c */
/* The stopper of a pipeline: the policy (NULL: all zero) over every
 * stage and the group, or the cgroup with FL_STOP_CGROUP. */
FL__HIDDEN int fl__pipeline_stopper(struct fl__stopper *s, struct fl_pipeline *pl,
                                    const struct fl_stop_policy *policy,
                                    const char *default_cgroup);
/* SIGKILL to the first k stages and the group, then each reaped and
 * closed, the leader last: nothing of them is left. */
FL__HIDDEN void fl__pipeline_kill(struct fl_proc *procs, size_t k);
/* Stages launched (FL_NO_WAIT_EXEC, the default) or each started blocking,
 * one after the other, for `forkless bench launch`, which links the static
 * library and measures what launching saves a pipeline's start-up. */
FL__HIDDEN void fl__pipeline_launch(bool on);

/* launch.c: FL_NO_WAIT_EXEC. A launch's record holds the plan (in
 * place: it points into itself), a copy of the command it was built
 * from, the child's stack and the exec word. */
struct fl__launch;
/* Copies cmd, builds the plan on the copy, takes a stack: 0 or an errno
 * (e filled, nothing left). *plan is then the record's. */
FL__HIDDEN int fl__launch_new(const struct fl_cmd *cmd, struct fl__launch **l,
                              struct fl__plan **plan, struct fl_error *e);
/* Frees the record of a launch whose child never ran (or is settled). */
FL__HIDDEN void fl__launch_free(struct fl__launch *l);
/* Waits until a launch has exec'd or failed, and returns the child's
 * errno (0: it runs) without reaping or settling it: a failed pipeline
 * leader keeps its group while the others are killed. 0 for a handle
 * without a launch pending. */
FL__HIDDEN int fl__launch_await(const struct fl_proc *proc);
/* fl__launch_await() without the wait: -1 while the child is still in
 * its setup. */
FL__HIDDEN int fl__launch_poll(const struct fl_proc *proc);
/* The same wait, a cancellation point (fl_wait() without a timeout):
 * cancelled, the launch is left pending as it was. */
FL__HIDDEN void fl__launch_await_cancellable(const struct fl_proc *proc);
/* Waits for proc's pending launch to exec or fail (nothing to do when
 * none is pending): 0, or the child's errno once it failed (the child
 * then reaped and proc marked so; the error kept in the record). */
FL__HIDDEN int fl__launch_settle(struct fl_proc *proc);
/* fl_close()'s part: settles and frees proc's launch record, or, where
 * the child is stopped before its exec, keeps it aside until the child
 * has exec'd or ended; either way proc holds no record after. Settles
 * what was kept aside and is ready, as each new launch does too. */
FL__HIDDEN void fl__launch_close(struct fl_proc *proc);
/* Settles the records fl__launch_close() kept aside that are ready: every
 * spawn calls it. Cheap when there are none; never blocks. */
FL__HIDDEN void fl__launch_sweep(void);
/* Makes the object that holds this code permanent, at the first launch
 * (keep_loaded.c). Keeps errno. */
FL__HIDDEN void fl__keep_code_loaded(void);
/* A wait that found no child of ours to wait for (err: ECHILD, the child
 * reaped elsewhere): the launch's error where the child failed before its
 * exec, which the first call that asks must get; else err. */
FL__HIDDEN int fl__launch_error_or(struct fl_proc *proc, int err);
/* For a pending launch with FL_NEW_PGROUP or FL_SETSID: waits until its
 * child leads its group (or has exec'd or ended), and changes nothing.
 * The group operations call it, so that a handle just launched acts as a
 * blocking spawn's would. false: the child is stopped before making its
 * group, so the group it will lead is the child alone (signal it through
 * the handle); true otherwise. Raw system calls only: async-signal-safe. */
FL__HIDDEN bool fl__launch_await_group(const struct fl_proc *proc);
/* fl_killpg(); *leader_only (when not NULL) set where the child had no
 * group yet and was signalled alone (fl__launch_await_group()). */
FL__HIDDEN int fl__killpg(struct fl_proc *proc, int sig, bool *leader_only);
/* The mask a child takes for its setup once it has reset the signals
 * that end a process (spawn_clone.c). */
FL__HIDDEN void fl__setup_mask(struct fl__plan *p, const sigset_t *caller, bool handlers_cleared);
/* The stack pool on (the default) or off, for `forkless bench launch`,
 * which links the static library and measures what the pool saves. */
FL__HIDDEN void fl__launch_pool(bool on);

/* error.c */
FL__HIDDEN int fl__fail(struct fl_error *e, int err, enum fl_step step,
                        int index, const char *path, const char *detail);
FL__HIDDEN int fl__fail_child(struct fl__plan *p, struct fl_error *e);
/* The length of the well-formed UTF-8 sequence of two or more bytes at c
 * (RFC 3629: no overlong form, no surrogate, nothing above U+10FFFF), or
 * 0. The bench's JSON uses it too. */
FL__HIDDEN size_t fl__utf8_len(const unsigned char *c);

#endif
