/*
 * test_threads.c: spawning from many threads at once, and while other
 * threads hold libc locks (pitfalls 5, 42).
 */
#include "test.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

struct worker {
    int id;
    int failures;
    char what[256];
};

static void *spawn_250(void *argp)
{
    struct worker *w = argp;
    for (int i = 0; i < 250 && !w->failures; i++) {
        char text[32], code[8];
        snprintf(text, sizeof text, "w%d-%d", w->id, i);
        snprintf(code, sizeof code, "%d", (w->id * 250 + i) % 256);
        struct fl_cmd cmd = {
            .argv = PROBE("cat", "echo", text, "exit", code),
            .stdio = { { .kind = FL_PIPE },
                       { .kind = FL_PIPE },
                       { .kind = FL_NULL } },
            .backend = BACKEND,
        };
        struct fl_proc p;
        int r = fl_spawn(&cmd, &p, NULL);
        if (r != 0) {
            snprintf(w->what, sizeof w->what, "spawn %d: %s", i, strerror(r));
            w->failures++;
            break;
        }
        close(p.stdio[0]);
        p.stdio[0] = -1;
        char buf[64];
        ssize_t n = 0, k;
        while ((k = read(p.stdio[1], buf + n, sizeof buf - 1 - (size_t)n)) > 0)
            n += k;
        buf[n > 0 ? n : 0] = 0;
        int st = -1;
        r = fl_wait(&p, -1, &st);
        fl_close(&p);
        char want[40];
        snprintf(want, sizeof want, "%s\n", text);
        if (r != 0 || strcmp(buf, want) != 0 || !WIFEXITED(st) ||
            WEXITSTATUS(st) != atoi(code)) {
            snprintf(w->what, sizeof w->what,
                     "spawn %d: wait %d, output \"%s\", status 0x%x", i, r,
                     buf, st);
            w->failures++;
        }
    }
    return NULL;
}

TEST(four_threads_spawn_250_each_with_pipes) /* stress */
{
    NEEDS_CLOSE_OTHERS();
    struct worker w[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct worker){ .id = i };
        ASSERT_OK(pthread_create(&t[i], NULL, spawn_250, &w[i]));
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 4; i++)
        if (w[i].failures)
            FAIL("thread %d: %s", i, w[i].what);
}

/* ---- malloc churn in another thread (pitfall 42) ------------------------- */

static atomic_bool churn_stop;

static void *churn_malloc(void *arg)
{
    (void)arg;
    void *keep[64] = { 0 };
    for (unsigned i = 0; !atomic_load(&churn_stop); i++) {
        unsigned k = i % 64;
        free(keep[k]);
        keep[k] = malloc(16 + (i * 7919) % 70000);
        if (keep[k])
            memset(keep[k], (int)i, 16);
        t_pace(i);
    }
    for (int k = 0; k < 64; k++)
        free(keep[k]);
    return NULL;
}

TEST(every_option_while_another_thread_churns_malloc) /* stress */
{
    char *d = t_tmpdir();
    int f = t_file_at(40, true);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    bool full = BACKEND != FL_BACKEND_POSIX_SPAWN;
    bool root = geteuid() == 0;
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, churn_malloc, NULL));
    for (int i = 0, n = t_scaled(600); i < n; i++) {
        struct fl_cmd cmd = {
            .argv = PROBE("exit", "3"),
            .cwd = d,
            .env_set = (const char *const[]){ "A=1", "PATH=/usr/bin:/bin",
                                              NULL },
            .env_unset = (const char *const[]){ "HOME", NULL },
            .stdio = { { .kind = FL_PIPE }, { .kind = FL_FILE, .path = "out",
                                      .flags = O_WRONLY | O_CREAT | O_APPEND },
                       { .kind = FL_TO_STDOUT } },
            .fds = (struct fl_fd_map[]){ { 3, 40 }, { 4, 40 } },
            .nfds = 2,
            .flags = FL_NEW_PGROUP | FL_NO_FORK * (BACKEND != FL_BACKEND_FORK),
            .sigmask = &mask,
            .backend = BACKEND,
        };
        /* Static: a compound literal inside the if would die with it. */
        static const struct fl_rlimit no_core[] = { { RLIMIT_CORE, 0, 0 } };
        static const gid_t nobody_groups[] = { 65534 };
        if (full) {
            cmd.rlimits = no_core;
            cmd.nrlimits = 1;
            cmd.flags |= FL_SET_UMASK;
            cmd.umask = 022;
            cmd.pdeathsig = SIGKILL;
            if (root) {
                cmd.flags |= FL_SET_UID | FL_SET_GID | FL_SET_GROUPS;
                cmd.uid = cmd.gid = 65534;
                cmd.groups = nobody_groups;
                cmd.ngroups = 1;
            }
        }
        struct fl_proc p;
        SPAWN(&cmd, &p);
        ASSERT_EXITED(t_wait(&p), 3);
    }
    atomic_store(&churn_stop, true);
    pthread_join(t, NULL);
    close(f);
}

/* ---- no atfork handlers (pitfall 5) -------------------------------------- */

static atomic_int atfork_calls;

static void count_atfork(void)
{
    atomic_fetch_add(&atfork_calls, 1);
}

/* The fork backend's child too is made by clone(), not glibc's fork(): it
 * makes no libc call, so nothing of the caller's is to be made safe for it. */
TEST(atfork_handlers_do_not_run)
{
#if defined(__sparc__)
    if (BACKEND == FL_BACKEND_FORK)
        SKIP("the fork backend keeps fork() here");
#endif
    ASSERT_OK(pthread_atfork(count_atfork, count_atfork, count_atfork));
    for (int i = 0; i < 20; i++) {
        struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        ASSERT_EXITED(t_wait(&p), 0);
    }
    ASSERT_EQ(atomic_load(&atfork_calls), 0);
}

/* Another thread forks while spawns run: a fork child copies whatever
 * fds a spawn holds at that moment (the fork backend's error pipe) and,
 * here, never execs nor exits. No spawn may wait for it. */
#define HOLDERS_MAX 1000
static pid_t holders[HOLDERS_MAX];
static atomic_int nholders, holders_stop;

static void *fork_holders(void *unused)
{
    (void)unused;
    while (!atomic_load(&holders_stop) && atomic_load(&nholders) < HOLDERS_MAX) {
        pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);   /* gone with the test, even a hung one */
            if (getppid() == 1)
                _exit(0);
            for (;;)
                pause();
        }
        if (pid > 0)
            holders[atomic_fetch_add(&nholders, 1)] = pid;
        else
            break;   /* no more processes: enough of them */
        nanosleep(&(struct timespec){ 0, 200 * 1000 }, NULL);
    }
    return NULL;
}

TEST(a_spawn_does_not_wait_for_a_fork_made_meanwhile_by_another_thread)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    SKIP("each fork copies the sanitizer's shadow memory: hundreds of them take too long");
#endif
#if !defined(__GLIBC__)
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        SKIP("musl's posix_spawn() reads its own error pipe to its end, which such a fork holds");
#endif
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, fork_holders, NULL));
    int done = 0;
    for (int i = 0; i < 300; i++, done++) {
        struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        ASSERT_EXITED(t_wait(&p), 0);
    }
    atomic_store(&holders_stop, 1);
    pthread_join(t, NULL);
    for (int i = 0; i < atomic_load(&nholders); i++) {
        kill(holders[i], SIGKILL);
        waitpid(holders[i], NULL, 0);
    }
    ASSERT_EQ(done, 300);
    ASSERT_GT(atomic_load(&nholders), 0);
}

TEST(handles_from_many_threads_wait_independently)
{
    /* Thread-safe for different handles: spawn here, wait there. */
    struct fl_proc p[8];
    for (int i = 0; i < 8; i++) {
        char code[8];
        snprintf(code, sizeof code, "%d", 10 + i);
        struct fl_cmd cmd = { .argv = PROBE("sleep", "0.05", "exit", code),
                              .backend = BACKEND };
        SPAWN(&cmd, &p[i]);
    }
    for (int i = 7; i >= 0; i--)
        ASSERT_EXITED(t_wait(&p[i]), 10 + i);
}

/* Pitfall 20: threads that each write a program, close it and run it at
 * once. A sibling's child between its clone and its exec holds a copy of
 * the write fd (O_CLOEXEC closes it only at exec), so exec can see
 * ETXTBSY. The children keep their fds (FL_KEEP_FDS), as a child of plain
 * fork or posix_spawn would, so that window is as wide as it gets. Without
 * FL_RETRY_ETXTBSY such a failure must be exactly that (counted, clean);
 * with it, none may reach the caller. */
struct writer {
    int rounds, spawns, etxtbsy, failures;
    bool retry;
    char path[256];
    char what[256];
};

static void *write_then_run(void *argp)
{
    struct writer *w = argp;
    static const char script[] = "#!/bin/sh\nexit 7\n";
    for (int i = 0; i < w->rounds && !w->failures; i++) {
        unlink(w->path);
        int fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        ssize_t n = fd < 0 ? -1 : write(fd, script, sizeof script - 1);
        if (fd >= 0)
            close(fd);
        if (n != (ssize_t)sizeof script - 1) {
            snprintf(w->what, sizeof w->what, "writing the program: %s", strerror(errno));
            w->failures++;
            break;
        }
        struct fl_cmd cmd = {
            .argv = ARGV(w->path),
            .flags = FL_KEEP_FDS | (w->retry ? FL_RETRY_ETXTBSY : 0),
            .backend = BACKEND,
        };
        struct fl_proc p;
        struct fl_error e;
        int r = fl_spawn(&cmd, &p, &e);
        w->spawns++;
        if (r == ETXTBSY && e.step == FL_STEP_EXEC && p.pid == 0 && !w->retry) {
            w->etxtbsy++;
            continue;
        }
        int st = -1;
        if (r == 0 && fl_wait(&p, -1, &st) == 0 && WIFEXITED(st) &&
            WEXITSTATUS(st) == 7) {
            fl_close(&p);
            continue;
        }
        snprintf(w->what, sizeof w->what, "round %d: fl_spawn %s, step %s, status 0x%x",
                 i, r ? strerror(r) : "ok", fl_step_name(e.step), st);
        if (r == 0)
            fl_close(&p);
        w->failures++;
    }
    return NULL;
}

/* Runs the writers; any outcome but exit 7, or (without retry) a clean
 * ETXTBSY, fails the case. Returns the spawns; *etxtbsy gets the count. */
static int run_writers(bool retry, int *etxtbsy)
{
    enum { NTHREADS = 8 };
    struct writer w[NTHREADS];
    pthread_t t[NTHREADS];
    char *dir = t_tmpdir();
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (struct writer){ .rounds = t_scaled(40), .retry = retry };
        snprintf(w[i].path, sizeof w[i].path, "%s/prog-%d", dir, i);
        ASSERT_OK(pthread_create(&t[i], NULL, write_then_run, &w[i]));
    }
    int spawns = 0;
    *etxtbsy = 0;
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < NTHREADS; i++) {
        if (w[i].failures)
            FAIL("thread %d (%s): %s", i, retry ? "retry" : "no retry", w[i].what);
        spawns += w[i].spawns;
        *etxtbsy += w[i].etxtbsy;
    }
    return spawns;
}

TEST(programs_written_and_run_by_many_threads_never_fail_with_etxtbsy_when_retried) /* stress */
{
    int busy = 0, unused = 0;
    int spawns = run_writers(false, &busy);
    bool retried = BACKEND != FL_BACKEND_POSIX_SPAWN;
    if (retried)
        spawns += run_writers(true, &unused);
    printf("REPORT scenario=write_then_run_etxtbsy spawns=%d signals=0 faults=0 "
           "cases=%d failures=0 pitfalls=20 backend=%s etxtbsy_without_retry=%d%s\n",
           spawns, retried ? 2 : 1, fl_backend_name(BACKEND), busy,
           retried ? " etxtbsy_with_retry=0" : " note=posix_spawn_cannot_retry");
}

/* ---- cancellation ---------------------------------------------------------- */

struct cancel_case {
    enum fl_backend backend;
    struct fl_proc proc;
    int result;
    bool returned;
};

/* Spawns with a cancellation request already pending: every cancellation
 * point inside fl_spawn() (close, waitid, read) would act on it. */
static void spawn_cancelled(struct cancel_case *c, struct fl_cmd *cmd)
{
    cmd->backend = c->backend;
    pthread_cancel(pthread_self());
    c->result = fl_spawn(cmd, &c->proc, NULL);
    c->returned = true;
    pthread_testcancel();
}

static void *spawn_while_cancelled(void *arg)
{
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "0"),
        .stdio = { { .kind = FL_PIPE }, { .kind = FL_PIPE }, { .kind = FL_PIPE } },
    };
    spawn_cancelled(arg, &cmd);
    return NULL;
}

static void *fail_while_cancelled(void *arg)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/nonexistent/prog"),
        .stdio = { [1] = { .kind = FL_PIPE } },
    };
    spawn_cancelled(arg, &cmd);
    return NULL;
}

static struct cancel_case run_cancelled(void *(*fn)(void *))
{
    struct cancel_case c = { .backend = BACKEND };
    pthread_t t;
    void *ret;
    ASSERT_EQ(pthread_create(&t, NULL, fn, &c), 0);
    ASSERT_EQ(pthread_join(t, &ret), 0);
    ASSERT(ret == PTHREAD_CANCELED);  /* cancelled, after fl_spawn() */
    ASSERT(c.returned);
    return c;
}

TEST(a_cancelled_thread_finishes_its_spawn_first)
{
    NEEDS_CLOSE_OTHERS();
    struct cancel_case c = run_cancelled(spawn_while_cancelled);
    ASSERT_OK(c.result);
    ASSERT_EXITED(t_wait(&c.proc), 0);  /* and the runner finds no leaked fd */
}

TEST(a_cancelled_thread_finishes_a_failing_spawn_first)
{
    NEEDS_CLOSE_OTHERS();
    struct cancel_case c = run_cancelled(fail_while_cancelled);
    ASSERT_ERR(c.result, ENOENT);
}

/* ---- the shared library unloaded while a thread that spawned lives on ------ */

struct dl_case {
    void *lib;
    enum fl_backend backend;
    int result, status;
    pthread_barrier_t spawned, unloaded;
};

static void *spawn_through_dlopen(void *arg)
{
    struct dl_case *c = arg;
    int (*spawn)(const struct fl_cmd *, struct fl_proc *, struct fl_error *) =
        (int (*)(const struct fl_cmd *, struct fl_proc *, struct fl_error *))dlsym(c->lib, "fl_spawn");
    int (*wait)(struct fl_proc *, int, int *) =
        (int (*)(struct fl_proc *, int, int *))dlsym(c->lib, "fl_wait");
    void (*close_proc)(struct fl_proc *) = (void (*)(struct fl_proc *))dlsym(c->lib, "fl_close");
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = c->backend };
    struct fl_proc p;
    c->result = spawn && wait && close_proc ? spawn(&cmd, &p, NULL) : -1;
    if (c->result == 0) {
        wait(&p, -1, &c->status);
        close_proc(&p);
    }
    pthread_barrier_wait(&c->spawned);
    pthread_barrier_wait(&c->unloaded);
    return NULL;  /* the thread's exit runs the library's key destructors */
}

static void thread_spawns_then_library_unloaded(const char *library)
{
    NEEDS_CLOSE_OTHERS();
    struct dl_case c = { .backend = BACKEND };
    c.lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!c.lib)
        SKIP(t_strdup(dlerror()));
    pthread_barrier_init(&c.spawned, NULL, 2);
    pthread_barrier_init(&c.unloaded, NULL, 2);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, spawn_through_dlopen, &c), 0);
    pthread_barrier_wait(&c.spawned);
    ASSERT_EQ(dlclose(c.lib), 0);
    pthread_barrier_wait(&c.unloaded);
    pthread_join(t, NULL);
    pthread_barrier_destroy(&c.spawned);
    pthread_barrier_destroy(&c.unloaded);
    ASSERT_OK(c.result);
    ASSERT_EXITED(c.status, 0);
}

TEST(a_thread_that_spawned_exits_safely_after_dlclose_of_the_library)
{
    thread_spawns_then_library_unloaded(FL_SHARED_LIB);
}

/* A plugin's own copy of the library goes with it at dlclose(), key
 * destructor included. */
TEST(a_thread_that_spawned_exits_safely_after_dlclose_of_a_plugin_with_the_static_library)
{
    thread_spawns_then_library_unloaded(FL_TEST_PLUGIN);
}

/* The process's mapped size (VmSize), which adjacent leaked pages cannot
 * hide by merging into one line of /proc/self/maps. */
static long long mapped_kib(void)
{
    char *status = t_read_file("/proc/self/status");
    const char *v = status ? strstr(status, "\nVmSize:") : NULL;
    long long kib = v ? strtoll(v + 8, NULL, 10) : -1;
    free(status);
    return kib;
}

static int count_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        n += t_fd_open(fd);
    return n;
}

/* One load of the plugin: a spawn (which keeps what the library keeps
 * between spawns: the stat fd, the thread's stack), then dlclose(). Not
 * a launch: a plugin that has launched stays loaded (see
 * set_aside_by_a_plugin_then_unloaded()), and nothing would be unloaded
 * to count. */
static void plugin_cycle(void)
{
    void *lib = dlopen(FL_TEST_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        SKIP(t_strdup(dlerror()));
    int (*spawn)(const struct fl_cmd *, struct fl_proc *, struct fl_error *) =
        (int (*)(const struct fl_cmd *, struct fl_proc *, struct fl_error *))dlsym(lib, "fl_spawn");
    int (*wait)(struct fl_proc *, int, int *) =
        (int (*)(struct fl_proc *, int, int *))dlsym(lib, "fl_wait");
    void (*close_proc)(struct fl_proc *) = (void (*)(struct fl_proc *))dlsym(lib, "fl_close");
    if (!spawn || !wait || !close_proc)
        FAIL("the plugin lacks fl_spawn, fl_wait or fl_close");
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
    struct fl_proc p;
    int status = -1;
    ASSERT_OK(spawn(&cmd, &p, NULL));
    ASSERT_OK(wait(&p, -1, &status));
    close_proc(&p);
    ASSERT_EXITED(status, 0);
    ASSERT_EQ(dlclose(lib), 0);
    /* Gone: what the counts below see is the unload's own. */
    void *still = dlopen(FL_TEST_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
#ifdef __GLIBC__
    ASSERT(still == NULL);
#else
    if (still)
        SKIP("this libc's dlclose() unloads nothing (musl): there is no unload to count");
#endif
}

TEST(a_plugin_with_the_static_library_loaded_and_unloaded_again_leaks_no_fd)
{
    NEEDS_CLOSE_OTHERS();
    for (int i = 0; i < 3; i++)  /* the libc's own first-load state */
        plugin_cycle();
    int fds = count_fds();
    for (int i = 0; i < 20; i++)
        plugin_cycle();
    ASSERT_EQ(count_fds(), fds);
}

/* A launch's child that fl_close() set aside, stopped in its setup (its
 * stdin a FIFO with no writer yet), runs the plugin's copy of the
 * library's code again once continued: a dlclose() of the plugin
 * meanwhile must leave that code where it is. in_destructor: the plugin
 * keeps the handle, to close it in its destructor, as the dlclose() would
 * unload it: too late to keep the code then, so it is kept from the
 * launch on. */
static void set_aside_by_a_plugin_then_unloaded(bool in_destructor)
{
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend launches without waiting for the exec");
    void *lib = dlopen(FL_TEST_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        SKIP(t_strdup(dlerror()));
    int (*spawn)(const struct fl_cmd *, struct fl_proc *, struct fl_error *) =
        (int (*)(const struct fl_cmd *, struct fl_proc *, struct fl_error *))dlsym(lib, "fl_spawn");
    void (*close_proc)(struct fl_proc *) = (void (*)(struct fl_proc *))dlsym(lib, "fl_close");
    void (*hold)(const struct fl_proc *) =
        (void (*)(const struct fl_proc *))dlsym(lib, "fl_test_plugin_hold");
    if (!spawn || !close_proc || !hold)
        FAIL("the plugin lacks fl_spawn, fl_close or fl_test_plugin_hold");
    const char *fifo = t_fmt("%s/fifo", t_tmpdir());
    ASSERT_SYS(mkfifo(fifo, 0600));
    struct fl_cmd cmd = { .argv = PROBE("exit", "7"), .backend = BACKEND, .flags = FL_NO_WAIT_EXEC,
                          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } } };
    struct fl_proc p;
    ASSERT_OK(spawn(&cmd, &p, NULL));
    pid_t pid = p.pid;
    ASSERT_SYS(kill(pid, SIGSTOP));
    siginfo_t si = { 0 };
    ASSERT_SYS(waitid(P_PID, (id_t)pid, &si, WSTOPPED | WNOWAIT));
    ASSERT_EQ(si.si_code, CLD_STOPPED);
    if (in_destructor)
        hold(&p);
    else
        close_proc(&p);   /* returns, the record set aside, while the child stays stopped */
    ASSERT_EQ(dlclose(lib), 0);
    int writer = open(fifo, O_RDWR | O_CLOEXEC);   /* never waits for a reader */
    ASSERT_SYS(writer);
    ASSERT_SYS(kill(pid, SIGCONT));
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    close(writer);
    ASSERT_EXITED(st, 7);
    /* Still loaded, its destructor not run: the handle it holds is let go
     * here. */
    lib = dlopen(FL_TEST_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
    ASSERT(lib != NULL);
    if (in_destructor) {
        void (*release)(void) = (void (*)(void))dlsym(lib, "fl_test_plugin_release");
        ASSERT(release != NULL);
        release();
    }
    ASSERT_EQ(dlclose(lib), 0);
}

TEST(a_child_set_aside_by_a_plugin_runs_its_program_after_the_plugin_s_dlclose)
{
    set_aside_by_a_plugin_then_unloaded(false);
}

TEST(a_child_set_aside_by_a_plugin_s_destructor_runs_its_program_after_the_dlclose)
{
    set_aside_by_a_plugin_then_unloaded(true);
}

/* Under a sanitizer or valgrind, loading and unloading maps more by itself. */
static void skip_where_objects_map_more(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    SKIP("the sanitizer's runtime maps more as objects come and go");
#endif
    const char *preload = getenv("LD_PRELOAD");
    if (preload && strstr(preload, "vgpreload"))
        SKIP("valgrind maps more as objects come and go");
}

/* The stack of a thread that spawned and lives on goes with the plugin:
 * the key's destructor, which would unmap it at the thread's exit, is gone
 * with the plugin's code. */
TEST(a_plugin_unloaded_while_a_thread_that_spawned_through_it_lives_leaks_no_mapping)
{
    skip_where_objects_map_more();
    for (int i = 0; i < 3; i++)
        thread_spawns_then_library_unloaded(FL_TEST_PLUGIN);
    long long kib = mapped_kib();
    ASSERT_GT(kib, 0);
    for (int i = 0; i < 20; i++)
        thread_spawns_then_library_unloaded(FL_TEST_PLUGIN);
    ASSERT_EQ(mapped_kib(), kib);
}

TEST(a_plugin_with_the_static_library_loaded_and_unloaded_again_leaks_no_mapping)
{
    skip_where_objects_map_more();
    NEEDS_CLOSE_OTHERS();
    for (int i = 0; i < 3; i++)
        plugin_cycle();
    long long kib = mapped_kib();
    ASSERT_GT(kib, 0);
    for (int i = 0; i < 20; i++)
        plugin_cycle();
    ASSERT_EQ(mapped_kib(), kib);
}
