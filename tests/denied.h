/*
 * denied.h: a spawn from a subprocess of the test that runs under a
 * seccomp filter of its own, one that makes the given system calls fail
 * with a chosen errno. The child inherits the filter, so a step that no
 * real setting can make fail (sethostname() in a new UTS namespace, the
 * first mount() in a new mount namespace, Landlock on a kernel that has
 * it) fails there, and the case checks that the error names that step.
 * Such a case needs NEEDS_SECCOMP() first: where no filter can be
 * installed, nothing can be made to fail this way.
 */
#ifndef FL_TEST_DENIED_H
#define FL_TEST_DENIED_H

#include "test.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

struct t_denied {
    int r;                  /* fl_spawn()'s return */
    struct fl_error e;
    unsigned landlock_unenforced;
};

/* Forks a subprocess of the test whose calls named in names[]
 * (NULL-terminated) fail with err: 0 in that subprocess, once its filter
 * is in place (it exits 3 where it cannot install it), its pid in the
 * test. Root installs the filter as it is; others set no_new_privs
 * first. */
static inline pid_t t_fork_denied(const char *const *names, int err)
{
    int nrs[8], n = 0;
    for (; names[n]; n++) {
        if (n == 8 || (nrs[n] = fl_syscall_number(names[n])) < 0)
            FAIL("no system call %s here", names[n]);
    }
    struct sock_fprog prog;
    ASSERT_OK(fl_seccomp_deny(nrs, (size_t)n, err, &prog));
    fflush(stdout);
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        if ((geteuid() != 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ||
            syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
            _exit(3);
        return 0;
    }
    fl_seccomp_free(&prog);
    return pid;
}

/* Spawns cmd (and waits for it when it starts) in such a subprocess. */
static inline struct t_denied t_spawn_denied(const struct fl_cmd *cmd, const char *const *names,
                                             int err)
{
    int fds[2];
    ASSERT_SYS(pipe(fds));
    pid_t pid = t_fork_denied(names, err);
    if (pid == 0) {
        close(fds[0]);
        struct t_denied d = { 0 };
        struct fl_proc p;
        d.r = fl_spawn(cmd, &p, &d.e);
        if (d.r == 0) {
            int st;
            d.landlock_unenforced = p.landlock_unenforced;
            fl_wait(&p, -1, &st);
            fl_close(&p);
        }
        _exit(write(fds[1], &d, sizeof d) == (ssize_t)sizeof d ? 0 : 4);
    }
    close(fds[1]);
    struct t_denied d;
    ssize_t got = read(fds[0], &d, sizeof d);
    close(fds[0]);
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    ASSERT_EXITED(st, 0);
    ASSERT_EQ(got, (ssize_t)sizeof d);
    return d;
}

#endif
