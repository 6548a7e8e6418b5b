/* pty.c: terminals. The pseudo-terminal of FL_PTY streams is opened and
 * set up here in the parent (posix_openpt, then its terminal side, its
 * termios and window size), so that the child only has to make it its
 * controlling terminal (TIOCSCTTY, child.c). Also the checks of .tty and
 * the terminal flags, and the two calls on terminals of the public API. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "internal.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

static int invalid(struct fl_error *e, const char *detail)
{
    return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", detail);
}

/* Whether the command sets the child's fd fd: a stdio stream that is
 * not inherited, or an fd map. */
static bool set_by_cmd(const struct fl_cmd *cmd, int fd)
{
    if (fd < 3 && cmd->stdio[fd].kind != FL_INHERIT)
        return true;
    for (size_t i = 0; i < cmd->nfds; i++)
        if (cmd->fds[i].child_fd == fd)
            return true;
    return false;
}

/* A terminal fd that no stdio stream or fd map sets is the caller's own
 * fd of that number, inherited as it is, and must be open. Else the
 * child's ioctl would meet whatever the spawn put there (a pipe, a
 * pidfd, the Landlock ruleset), or nothing, and say ENOTTY or EBADF at a
 * step that is not the mistake. Asked with the command, before anything
 * opens an fd (the plan's pipes, a pipeline's), and the library's own
 * fds do not count. The posix_spawn backend's ENOTSUP, for what it
 * cannot do, comes first. */
static int check_tty_fd(const struct fl_cmd *cmd, int fd, struct fl_error *e)
{
    bool posix = cmd->backend == FL_BACKEND_POSIX_SPAWN;
    if (!(cmd->flags & (FL_SETCTTY | FL_FOREGROUND)) || set_by_cmd(cmd, fd) ||
        fl__caller_fd_open(fd) ||
        (posix && ((cmd->flags & FL_SETCTTY) || !fl__posix_spawn_foreground())))
        return 0;
    char what[FL_ERROR_DETAIL_MAX];
    snprintf(what, sizeof what, "tty: parent fd %d is not open (no stdio stream or fd map sets it)", fd);
    return fl__fail(e, EBADF, FL_STEP_PREPARE, fd, "", what);
}

int fl__tty_check(const struct fl_cmd *cmd, struct fl_error *e)
{
    static const struct fl_tty_options zero;
    const struct fl_tty_options *t = cmd->tty ? cmd->tty : &zero;
    unsigned f = cmd->flags;
    bool pty = fl__pty_stream(cmd) >= 0;
    for (size_t i = 0; i < sizeof t->reserved_ / sizeof t->reserved_[0]; i++)
        if (t->reserved_[i])
            return invalid(e, "tty: reserved fields must be zero");
    if (pty && (f & FL_SETCTTY))
        return invalid(e, "FL_PTY makes the pty the controlling terminal: no FL_SETCTTY");
    if ((pty || (f & FL_SETCTTY)) && (f & FL_JOIN_PGROUP))
        return invalid(e, "a new session (FL_PTY, FL_SETCTTY) cannot join a process group");
    if ((f & FL_FOREGROUND) && (pty || (f & (FL_SETSID | FL_SETCTTY))))
        return invalid(e, "FL_FOREGROUND is for the caller's terminal, which a new session "
                          "(FL_SETSID, FL_SETCTTY, FL_PTY) leaves");
    if ((f & (FL_SETCTTY | FL_FOREGROUND)) && t->fd < 0)
        return invalid(e, "tty: negative fd");
    if (!pty && (t->rows || t->cols || t->termios))
        return invalid(e, "tty: rows, cols and termios are for an FL_PTY stream");
    return check_tty_fd(cmd, t->fd, e);
}

static int pty_fail(struct fl_error *e, const char *path, const char *detail)
{
    return fl__fail(e, errno, FL_STEP_OPENPT, -1, path, detail);
}

/* The terminal side: TIOCGPTPEER (Linux 4.13) opens it from the master
 * itself, right whatever /dev/pts is mounted here; else by its name. */
static int open_slave(int master, char *name, size_t size)
{
    int fd = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && (errno == EINVAL || errno == ENOTTY)) {
        if ((errno = ptsname_r(master, name, size)) != 0)
            return -1;
        fd = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    }
    int err = errno;
    if (fd < 0 && !name[0] && ptsname_r(master, name, size) != 0)
        name[0] = '\0';  /* for the message only */
    errno = err;
    return fd;
}

/* Both ends FD_CLOEXEC from their creation, so that no child another
 * thread starts meanwhile inherits either. */
static int open_pty(struct fl__plan *p, const struct fl_tty_options *t, struct fl_error *e)
{
    char name[64] = "";
    p->pty_master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (p->pty_master < 0)
        return pty_fail(e, "/dev/ptmx", "posix_openpt");
    if (grantpt(p->pty_master) < 0 || unlockpt(p->pty_master) < 0)
        return pty_fail(e, "/dev/ptmx", "grantpt, unlockpt");
    p->pty_slave = open_slave(p->pty_master, name, sizeof name);
    if (p->pty_slave < 0)
        return pty_fail(e, name[0] ? name : "/dev/ptmx", "opening the terminal side");
    bool size = t && (t->rows || t->cols);
    if ((t && t->termios) || size)
        ptsname_r(p->pty_master, name, sizeof name);  /* only for a message */
    if (t && t->termios && tcsetattr(p->pty_slave, TCSANOW, t->termios) < 0)
        return pty_fail(e, name, "tcsetattr");
    struct winsize ws = { .ws_row = size ? t->rows : 0, .ws_col = size ? t->cols : 0 };
    if (size && ioctl(p->pty_slave, TIOCSWINSZ, &ws) < 0)
        return pty_fail(e, name, "TIOCSWINSZ");
    return 0;
}

int fl__plan_tty(struct fl__plan *p, struct fl_error *e)
{
    const struct fl_cmd *cmd = p->cmd;
    int fd = cmd->tty ? cmd->tty->fd : 0;
    int first = fl__pty_stream(cmd);
    if (first >= 0) {
        int r = open_pty(p, cmd->tty, e);
        if (r)
            return r;
        p->ctty_fd = first;
        p->flags |= FL_SETSID;
    }
    if (p->flags & FL_SETCTTY) {
        p->ctty_fd = fd;
        p->flags |= FL_SETSID;
    }
    if (p->flags & FL_FOREGROUND) {
        p->fg_fd = fd;
        if (!(p->flags & FL_JOIN_PGROUP))
            p->flags |= FL_NEW_PGROUP;
    }
    return 0;
}

/* The caller's fd that the child's fd fd is a copy of: inherited (no
 * step for it), or the source of the last dup onto it; -1 for a file
 * the child opens itself. */
static int parent_fd_of(const struct fl__plan *p, int fd)
{
    for (int hops = 0; hops < 3; hops++) {
        const struct fl__act *last = NULL;
        for (size_t i = 0; i < p->nacts; i++)
            if (p->acts[i].child_fd == fd)
                last = &p->acts[i];
        if (!last)
            return fd;
        if (last->kind != FL__ACT_DUP)
            return -1;
        if (last->staged_fd != -2)
            return last->src_fd;
        fd = last->src_fd;  /* FL_TO_STDOUT: the child's own fd 1 */
    }
    return -1;
}

#ifndef TIOCGDEV
#define TIOCGDEV _IOR('T', 0x32, unsigned int)
#endif

/* The terminal's own device number, also through /dev/tty; 0: none. */
static unsigned terminal_dev(int fd)
{
    unsigned dev = 0;
    return ioctl(fd, TIOCGDEV, &dev) == 0 ? dev : 0;
}

/* An fd for the terminal FL_FOREGROUND hands over, which is the caller's
 * controlling terminal (the only one TIOCSPGRP takes): mine, the caller's
 * fd that the child's is a copy of, while it is that terminal (dev, when
 * known: a launch's caller may have closed or reused it by the settle),
 * else /dev/tty, opened for the moment (so that the pidfd still finds a
 * free slot at the fd limit), as where the child opens the terminal
 * itself (FL_FILE). The caller's comes first: the close of the library's
 * own could be the terminal's last, a hang-up. *opened: close it. */
static int open_terminal(int mine, unsigned dev, bool *opened)
{
    *opened = false;
    unsigned seen = mine >= 0 ? terminal_dev(mine) : 0;
    if (seen && (!dev || seen == dev))
        return mine;
    int fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 && dev && terminal_dev(fd) != dev) {
        close(fd);
        fd = -1;
    }
    *opened = fd >= 0;
    return fd;
}

/* Who has the terminal before the child takes it: a failed spawn gives
 * it back to that group, which is not the caller's when the caller runs
 * in the background. */
static void note(int mine, struct fl__foreground *before)
{
    int saved = errno;
    bool opened;
    int fd = open_terminal(mine, 0, &opened);
    pid_t fg = fd >= 0 ? tcgetpgrp(fd) : -1;
    before->pgrp = fg > 0 ? fg : 0;
    before->dev = fd >= 0 ? terminal_dev(fd) : 0;
    if (opened)
        close(fd);
    errno = saved;
}

static int set_foreground(int fd, pid_t pgrp)
{
    sigset_t ttou, old;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    pthread_sigmask(SIG_BLOCK, &ttou, &old);
    int r = tcsetpgrp(fd, pgrp) < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return r;
}

/* Only from a group that is gone and was not in the foreground before:
 * never from a live one, nor from one that held it all along. */
static void give_back(int mine, const struct fl__foreground *before)
{
    int saved = errno;
    bool opened;
    int fd = open_terminal(mine, before->dev, &opened);
    pid_t fg = fd >= 0 ? tcgetpgrp(fd) : -1;
    if (fg > 0 && fg != before->pgrp && fg != getpgrp() && kill(-fg, 0) < 0 && errno == ESRCH &&
        (before->pgrp <= 0 || set_foreground(fd, before->pgrp) != 0))
        set_foreground(fd, getpgrp());  /* the group before is gone too, or unknown */
    if (opened)
        close(fd);
    errno = saved;
}

void fl__tty_note_foreground(struct fl__plan *p)
{
    if (p->fg_fd >= 0)
        note(parent_fd_of(p, p->fg_fd), &p->fg_before);
}

void fl__tty_give_back(const struct fl__plan *p)
{
    if (p->fg_fd >= 0)
        give_back(parent_fd_of(p, p->fg_fd), &p->fg_before);
}

void fl__foreground_note(struct fl__foreground *before)
{
    note(-1, before);
}

void fl__foreground_give_back(const struct fl__foreground *before)
{
    give_back(-1, before);
}

int fl_pty_resize(int fd, unsigned short rows, unsigned short cols)
{
    int saved = errno;
    struct winsize ws = { .ws_row = rows, .ws_col = cols };
    int r = ioctl(fd, TIOCSWINSZ, &ws) < 0 ? errno : 0;
    errno = saved;
    return r;
}

int fl_tty_reclaim(int fd)
{
    int saved = errno;
    int r = set_foreground(fd, getpgrp());
    errno = saved;
    return r;
}
