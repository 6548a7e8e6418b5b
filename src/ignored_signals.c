/* ignored_signals.c: how a clone child learns which signals the process
 * ignores without asking the kernel 29 times.
 *
 * The clean child must reset every SIG_IGN to SIG_DFL (clone3's
 * CLONE_CLEAR_SIGHAND already reset the handlers). Setting signals 1-31
 * one by one is exact but costs 29 system calls in every spawn; opening
 * /proc/self/stat in the child costs more, as the kernel must first make
 * the new process's /proc entries. The library instead keeps this
 * process's own /proc/<pid>/task/<pid>/stat open (the main thread's, the
 * same figures as /proc/<pid>/stat, and a file an application is less
 * likely to open itself), and a child cloned under CLONE_VFORK reads it
 * with one pread() (low_signals_to_reset() in child.c). It is lent only
 * when the process has one thread, and that read is then exact: its only
 * thread is the one sleeping in the clone, so the dispositions cannot
 * change between the clone, which copied them, and the read. With more
 * threads the child resets 1-31 one by one; so it does when the stat
 * counts more than one (threads made behind the libc's back, with a raw
 * clone(), while they live). No stat shows a process
 * made with clone(CLONE_SIGHAND) but not CLONE_THREAD, which shares the
 * dispositions without being a thread: if it changes one during a spawn,
 * the child may keep a SIG_IGN (forkless.h says so).
 *
 * The fd is the library's, so it must survive what the application does
 * to fds it did not open, and never be read when it is something else:
 * - closed (a closefrom() loop): fstat() fails, and it is opened again;
 * - its number reused (dup2() over it, or a later open()): its device and
 *   inode are not the ones kept, so it is left alone and another opened
 *   (only the same file opened again at the same number passes for ours);
 * - inherited by a fork(): its file is the parent's. A fork() child drops
 *   it at once (pthread_atfork); one made otherwise (_Fork(), a raw clone)
 *   is seen at its first spawn, without a system call where the kernel
 *   wipes a page of ours in the copy (MADV_WIPEONFORK, Linux 4.14), else
 *   by getpid().
 * It is O_CLOEXEC, so no child keeps it past exec, and never 0-2. A
 * process that cannot open it (no /proc, no fd left) gets -1 and the 29
 * calls; so does one whose clone3() turned out unusable, whose clone()
 * child resets every signal anyway. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "internal.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static int kept_fd = -1;
static dev_t kept_dev;
static ino_t kept_ino;
static pid_t kept_pid;
/* A page the kernel zeroes in a forked copy of the process: byte 0 is 1
 * while kept_fd is this process's own. NULL: no such page, compare
 * getpid() with kept_pid instead. */
static volatile char *fork_mark;
static pthread_once_t fork_mark_once = PTHREAD_ONCE_INIT;
/* /proc is not there, or not ours to read, or clone3() is not usable:
 * stop trying. */
static bool given_up;
/* Spawns left before the fd is opened again, after it was given up for
 * a pidfd (fl__ignored_signals_release()). */
static unsigned starved;

static bool same_file(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == kept_dev && st.st_ino == kept_ino;
}

static void drop_kept(void)
{
    if (kept_fd >= 0 && same_file(kept_fd))
        close(kept_fd);
    kept_fd = -1;
}

/* In the child of a fork(): the kept fd is the parent's file. Only this
 * thread is left, so nothing else holds the lock now; another thread may
 * have held it at the fork. */
static void after_fork_in_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    kept_lock = fresh;
    drop_kept();
    starved = 0;
}

/* At load, not at the first spawn: that one may come from inside an
 * application's own atfork handler, where musl's atfork lock is held. */
__attribute__((constructor)) static void register_after_fork(void)
{
    pthread_atfork(NULL, NULL, after_fork_in_child);
}

/* Whether the process has one thread now: a task directory in /proc
 * links "." and ".." and one entry per thread. */
static bool one_thread_now(void)
{
    struct stat st;
    return stat("/proc/self/task", &st) == 0 && st.st_nlink == 3;
}

/* Whether no spawn can be reading the kept fd now. It is lent only while
 * the process has one thread (fl__ignored_signals_fd()), which cannot be
 * spawning while it runs this. musl's dlclose() unloads nothing: there
 * this runs at exit only, where nothing is lost. */
static bool no_spawn_reads_the_fd(void)
{
    return &__libc_single_threaded || one_thread_now();
}

/* Unloaded with a plugin that linked the static archive (dlclose()), the
 * fd and the page would stay behind once per load. */
__attribute__((destructor)) static void release_at_unload(void)
{
    if (!no_spawn_reads_the_fd() || pthread_mutex_trylock(&kept_lock) != 0)
        return;
    drop_kept();
    if (fork_mark) {
        munmap((void *)fork_mark, 4096);
        fork_mark = NULL;  /* a later spawn asks getpid() instead */
    }
    pthread_mutex_unlock(&kept_lock);
}

static void make_fork_mark(void)
{
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return;
    if (madvise(m, 4096, MADV_WIPEONFORK) != 0) {
        munmap(m, 4096);
        return;
    }
    fork_mark = m;
}

static bool forked_since_opened(void)
{
    return fork_mark ? fork_mark[0] != 1 : getpid() != kept_pid;
}

static void open_kept(void)
{
    pthread_once(&fork_mark_once, make_fork_mark);
    pid_t pid = getpid();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0) {
        given_up = errno != EMFILE && errno != ENFILE && errno != ENOMEM && errno != EINTR;
        return;
    }
    if (fd < 3) {
        /* A daemon that closed its stdio reopens it with the lowest
         * numbers: those are not the library's to take. */
        int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        if (high < 0)
            return;
        fd = high;
    }
    /* procfs's own, not a file mounted over that name (in a mount
     * namespace of the caller's), whose figures could say anything. */
    struct statfs fs;
    if (fstat(fd, &st) != 0 || fstatfs(fd, &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC) {
        close(fd);
        return;
    }
    kept_fd = fd;
    kept_dev = st.st_dev;
    kept_ino = st.st_ino;
    kept_pid = pid;
    if (fork_mark)
        fork_mark[0] = 1;
}

/* Whether this thread's fd table is not the one the fd was opened in (the
 * opener's, kept_pid's main thread's): kcmp(KCMP_FILES) says. False where
 * it cannot tell (no kcmp, the main thread gone). */
static bool table_of_its_own(void)
{
    long r = syscall(SYS_kcmp, (long)kept_pid, (long)syscall(SYS_gettid), 2L /* KCMP_FILES */,
                     0L, 0L);
    return r > 0;
}

int fl__ignored_signals_fd(pid_t *pid)
{
    if (pthread_mutex_trylock(&kept_lock) != 0)
        return -1;  /* another thread is here: the child counts threads anyway */
    if (kept_fd >= 0 && forked_since_opened())
        drop_kept();  /* made by _Fork() or a raw clone: no handler ran */
    int fd = -1;
    /* Lent only while this thread is the process's only one: then no other
     * can change a disposition, or appear, before the child has read. The
     * child's own count of threads would miss one that changed a
     * disposition after the clone and ended before the read. Where the
     * libc cannot say (musl, glibc before 2.32), /proc counts them. */
    if (&__libc_single_threaded ? __libc_single_threaded : one_thread_now()) {
        if (kept_fd >= 0 && !same_file(kept_fd)) {
            /* Closed, or its number someone else's now; or this thread has
             * an fd table of its own (unshare(CLONE_FILES)), where ours is
             * not: then it stays ours, and this spawn does without. */
            if (table_of_its_own()) {
                pthread_mutex_unlock(&kept_lock);
                return -1;
            }
            kept_fd = -1;
        }
        if (kept_fd < 0 && !given_up && (starved == 0 || --starved == 0))
            open_kept();
        fd = kept_fd;
        *pid = kept_pid;
    }
    pthread_mutex_unlock(&kept_lock);
    return fd;
}

bool fl__ignored_signals_holds(int fd)
{
    /* Busy: another thread is spawning, or a fork() copied the lock
     * held; the caller's checks then take fd as the caller's, as they
     * did before the library kept one. */
    if (fd < 0 || pthread_mutex_trylock(&kept_lock) != 0)
        return false;
    /* A fork()'s copy is the library's too. Another file at the number is
     * the caller's, but kept_fd is not forgotten here: a thread with an fd
     * table of its own (unshare(CLONE_FILES)) sees another file where the
     * other threads still have ours, which a fork() child must then drop.
     * The lending (fl__ignored_signals_fd()) looks again before any read. */
    bool held = fd == kept_fd && same_file(fd);
    pthread_mutex_unlock(&kept_lock);
    return held;
}

void fl__ignored_signals_release(int fd)
{
    pthread_mutex_lock(&kept_lock);
    if (fd == kept_fd) {
        drop_kept();
        starved = 1024;
    }
    pthread_mutex_unlock(&kept_lock);
}

void fl__ignored_signals_give_up(void)
{
    pthread_mutex_lock(&kept_lock);
    drop_kept();
    given_up = true;
    pthread_mutex_unlock(&kept_lock);
}
