/*
 * test_stress.c: many threads spawn at once while other threads flood the
 * process with a signal, churn malloc, open fds without O_CLOEXEC and change
 * the environment (pitfalls 22, 29, 42, 44).
 *
 * Every spawn passes an explicit .env: forkless.h documents that with .env
 * NULL it reads environ, and that another thread changing the environment
 * meanwhile is the caller's problem (as for getenv). The setenv thread is
 * there to show that an explicit .env makes the spawn independent of it.
 *
 * Each case prints one machine-readable line,
 *     REPORT scenario=<name> spawns=<n> signals=<n> faults=<n> cases=<n>
 *            failures=0 pitfalls=<list> [notes]
 */
#include "test.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static pid_t parent_pid;
static volatile unsigned long canary = 0xC0FFEEUL;
static atomic_long handled, handled_elsewhere;
static atomic_bool stop_bg;
static atomic_long fds_opened, env_changes, mallocs;

static void on_usr1(int sig)
{
    (void)sig;
    int saved = errno;
    pid_t me = (pid_t)syscall(SYS_getpid);
    if (me != parent_pid || canary != 0xC0FFEEUL) {
        atomic_fetch_add(&handled_elsewhere, 1);
        canary = 0xDEADUL;
    } else {
        atomic_fetch_add(&handled, 1);
    }
    errno = saved;
}

static void *bg_flood(void *arg)
{
    (void)arg;
    for (unsigned i = 0; !atomic_load(&stop_bg); i++) {
        kill(parent_pid, SIGUSR1);
        t_pace(i);
    }
    return NULL;
}

static void *bg_malloc(void *arg)
{
    (void)arg;
    void *keep[64] = { 0 };
    for (unsigned i = 0; !atomic_load(&stop_bg); i++) {
        unsigned k = i % 64;
        free(keep[k]);
        keep[k] = malloc(16 + (i * 7919) % 70000);
        if (keep[k])
            memset(keep[k], (int)i, 16);
        atomic_fetch_add(&mallocs, 1);
        t_pace(i);
    }
    for (int k = 0; k < 64; k++)
        free(keep[k]);
    return NULL;
}

/* Opens fds without O_CLOEXEC (files, pipes, sockets-like pairs) and closes
 * them again a little later, so that at any moment some are open. */
static void *bg_fds(void *arg)
{
    (void)arg;
    int ring[16];
    for (int k = 0; k < 16; k++)
        ring[k] = -1;
    for (unsigned i = 0; !atomic_load(&stop_bg); i++) {
        unsigned k = i % 16;
        if (ring[k] >= 0)
            close(ring[k]);
        ring[k] = -1;
        if (i % 3 == 0) {
            int pp[2];
            if (pipe(pp) == 0) {
                ring[k] = pp[0];
                close(pp[1]);
            }
        } else {
            ring[k] = open("/dev/null", O_RDONLY); /* no O_CLOEXEC */
        }
        atomic_fetch_add(&fds_opened, 1);
        t_pace(i);
    }
    for (int k = 0; k < 16; k++)
        if (ring[k] >= 0)
            close(ring[k]);
    return NULL;
}

static void *bg_env(void *arg)
{
    (void)arg;
    char val[32];
    for (unsigned i = 0; !atomic_load(&stop_bg); i++) {
        snprintf(val, sizeof val, "v%u", i);
        if (i % 2)
            setenv("FL_STRESS_CHURN", val, 1);
        else
            unsetenv("FL_STRESS_CHURN");
        char name[32];
        snprintf(name, sizeof name, "FL_STRESS_%u", i % 8);
        setenv(name, val, 1);
        atomic_fetch_add(&env_changes, 1);
        t_pace(i);
    }
    for (unsigned k = 0; k < 8; k++) {
        char name[32];
        snprintf(name, sizeof name, "FL_STRESS_%u", k);
        unsetenv(name);
    }
    unsetenv("FL_STRESS_CHURN");
    return NULL;
}

struct spawner {
    int id, n, spawns, failures;
    char what[1024];
};

/* Counts the "fd N ..." lines and checks they are exactly 0, 1, 2. */
static bool only_std_fds(const char *out, char *why, size_t whysize)
{
    int seen = 0, n = 0;
    for (const char *l = out; l && *l;) {
        if (strncmp(l, "fd ", 3) == 0) {
            int fd = atoi(l + 3);
            n++;
            if (fd >= 0 && fd <= 2) {
                seen |= 1 << fd;
            } else {
                const char *nl = strchr(l, '\n');
                snprintf(why, whysize, "stray fd in the child: %.*s",
                         (int)(nl ? nl - l : 80), l);
                return false;
            }
        }
        const char *nl = strchr(l, '\n');
        l = nl ? nl + 1 : NULL;
    }
    if (seen != 7 || n != 3) {
        snprintf(why, whysize, "child fds not exactly 0,1,2 (%d lines)", n);
        return false;
    }
    return true;
}

static void *spawner(void *argp)
{
    struct spawner *w = argp;
    static char *const env[] = { "PATH=/usr/bin:/bin", "FL_STRESS=1", NULL };
    for (int i = 0; i < w->n && !w->failures; i++) {
        char code[8];
        int want = (w->id * 37 + i) % 200;
        snprintf(code, sizeof code, "%d", want);
        struct fl_cmd cmd = {
            .argv = PROBE("fds", "getenv", "FL_STRESS", "exit", code),
            .env = env,
            .stdio = { { .kind = FL_NULL }, { .kind = FL_PIPE },
                       { .kind = FL_NULL } },
            .backend = BACKEND,
        };
        struct fl_proc p;
        struct fl_error e;
        int r = fl_spawn(&cmd, &p, &e);
        if (r != 0) {
            char buf[512];
            snprintf(w->what, sizeof w->what, "spawn %d: %s", i,
                     fl_error_format(&e, buf, sizeof buf));
            w->failures++;
            break;
        }
        w->spawns++;
        /* Read to EOF by hand: t_read_all keeps memory until exit. */
        size_t cap = 8192, len = 0;
        char *buf = malloc(cap);
        for (;;) {
            if (cap - len < 1024)
                buf = realloc(buf, cap *= 2);
            ssize_t k = read(p.stdio[1], buf + len, cap - len - 1);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            len += (size_t)k;
        }
        buf[len] = 0;
        int st = -1;
        r = fl_wait(&p, -1, &st);
        fl_close(&p);
        char why[256] = "";
        if (r != 0) {
            snprintf(w->what, sizeof w->what, "spawn %d: fl_wait %s", i,
                     fl_t_errname(r));
            w->failures++;
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != want) {
            snprintf(w->what, sizeof w->what,
                     "spawn %d: status 0x%x, expected exit %d", i, st, want);
            w->failures++;
        } else if (!only_std_fds(buf, why, sizeof why)) {
            snprintf(w->what, sizeof w->what, "spawn %d: %s; output:\n%.300s",
                     i, why, buf);
            w->failures++;
        } else if (!strstr(buf, "env FL_STRESS=1\n")) {
            snprintf(w->what, sizeof w->what,
                     "spawn %d: the child did not see its .env: %.300s", i,
                     buf);
            w->failures++;
        }
        free(buf);
    }
    return NULL;
}

/* The number of processes whose parent is this one (running or zombie). */
static int count_children(void)
{
    int n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        char path[64], buf[512];
        int pid = atoi(de->d_name);
        if (pid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t k = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (k <= 0)
            continue;
        buf[k] = 0;
        char *p = strrchr(buf, ')');
        char state;
        int ppid;
        if (p && sscanf(p + 1, " %c %d", &state, &ppid) == 2 &&
            ppid == (int)getpid())
            n++;
    }
    closedir(d);
    return n;
}

static void run_storm(const char *scenario, int nspawners, int per_thread,
                      bool flood, bool churn_malloc, bool churn_fds,
                      bool churn_env, const char *pitfalls)
{
    NEEDS_CLOSE_OTHERS();
    parent_pid = getpid();
    atomic_store(&stop_bg, false);
    atomic_store(&handled, 0);
    atomic_store(&handled_elsewhere, 0);
    struct sigaction sa = { .sa_handler = on_usr1 }, old;
    sigemptyset(&sa.sa_mask);
    ASSERT_SYS(sigaction(SIGUSR1, &sa, &old));

    pthread_t bg[4];
    int nbg = 0;
    if (flood)
        ASSERT_OK(pthread_create(&bg[nbg++], NULL, bg_flood, NULL));
    if (churn_malloc)
        ASSERT_OK(pthread_create(&bg[nbg++], NULL, bg_malloc, NULL));
    if (churn_fds)
        ASSERT_OK(pthread_create(&bg[nbg++], NULL, bg_fds, NULL));
    if (churn_env)
        ASSERT_OK(pthread_create(&bg[nbg++], NULL, bg_env, NULL));

    struct spawner w[8];
    pthread_t t[8];
    ASSERT_LE(nspawners, 8);
    for (int i = 0; i < nspawners; i++) {
        w[i] = (struct spawner){ .id = i, .n = per_thread };
        ASSERT_OK(pthread_create(&t[i], NULL, spawner, &w[i]));
    }
    for (int i = 0; i < nspawners; i++)
        pthread_join(t[i], NULL);
    atomic_store(&stop_bg, true);
    for (int i = 0; i < nbg; i++)
        pthread_join(bg[i], NULL);
    /* A SIGUSR1 still pending is discarded by SIG_IGN, not fatal. */
    struct sigaction ign = { .sa_handler = SIG_IGN };
    sigaction(SIGUSR1, &ign, NULL);
    sigaction(SIGUSR1, &old, NULL);

    int spawns = 0, failures = 0;
    for (int i = 0; i < nspawners; i++) {
        spawns += w[i].spawns;
        failures += w[i].failures;
        if (w[i].failures)
            dprintf(2, "thread %d: %s\n", i, w[i].what);
    }
    int kids = count_children();
    printf("REPORT scenario=%s spawns=%d signals=%ld faults=%ld cases=1 "
           "failures=%d pitfalls=%s backend=%s fds_opened=%ld "
           "env_changes=%ld mallocs=%ld children_left=%d env=explicit%s\n",
           scenario, spawns, atomic_load(&handled),
           atomic_load(&handled_elsewhere), failures + (kids != 0), pitfalls,
           fl_backend_name(BACKEND), atomic_load(&fds_opened),
           atomic_load(&env_changes), atomic_load(&mallocs), kids,
           churn_env ? " note=spawns_pass_explicit_env_because_reading_environ_"
                       "during_setenv_is_the_callers_problem"
                     : "");
    for (int i = 0; i < nspawners; i++)
        if (w[i].failures)
            FAIL("thread %d: %s", i, w[i].what);
    ASSERT_EQ(atomic_load(&handled_elsewhere), 0);
    ASSERT(canary == 0xC0FFEEUL);
    ASSERT_EQ(kids, 0);
    ASSERT_EQ(spawns, nspawners * per_thread);
    if (flood)
        ASSERT_GT(atomic_load(&handled), 0);
}

TEST(storm_all_at_once) /* stress */
{
    atomic_store(&fds_opened, 0);
    atomic_store(&env_changes, 0);
    atomic_store(&mallocs, 0);
    run_storm("storm_all_at_once", 4, t_scaled(40), true, true, true, true,
              "22,29,42,44");
}

TEST(storm_fd_openers_only) /* stress */
{
    /* Two threads open fds without O_CLOEXEC; no other noise, so a stray
     * fd in a child is the only thing that can go wrong. */
    atomic_store(&fds_opened, 0);
    atomic_store(&env_changes, 0);
    atomic_store(&mallocs, 0);
    parent_pid = getpid();
    atomic_store(&stop_bg, false);
    pthread_t extra;
    ASSERT_OK(pthread_create(&extra, NULL, bg_fds, NULL));
    run_storm("storm_fd_openers_only", 3, t_scaled(30), false, false, true,
              false, "29,30");
    atomic_store(&stop_bg, true);
    pthread_join(extra, NULL);
}

TEST(storm_signal_flood_while_waiting) /* stress */
{
    atomic_store(&fds_opened, 0);
    atomic_store(&env_changes, 0);
    atomic_store(&mallocs, 0);
    run_storm("storm_signal_flood_while_waiting", 2, t_scaled(50), true,
              false, false, false, "22,27");
}
