/*
 * test_differential.c: the backends must agree. Random commands from a
 * seeded PRNG (fd maps with cycles and aliases, env edits, cwd, rlimits,
 * umask, signal masks and dispositions, setsid / process groups,
 * no_new_privs, a seccomp filter, Landlock rules, CPU affinity, nice,
 * ioprio and oom_score_adj, each with or without best effort) are spawned
 * with every backend that can express them; the probe reports what the
 * child saw (and what it could do: a mkdir, which the filter denies, and a
 * write outside the Landlock rules) and the reports must be equal, with
 * the handle's not_applied and landlock_unenforced.
 *
 *   FL_DIFF_CASES=N   how many commands (default 150, split over the three
 *                     CTest runs of the case: backend b takes i % 3 == b)
 *   FL_DIFF_SEED=S    the seed; default 0x5eed, or, when FL_DIFF_CASES is
 *                     set and FL_DIFF_SEED is not, a random one (printed)
 *   FL_DIFF_VERBOSE=1 print the commands whose spawn failed (alike)
 *
 * The posix_spawn backend returns ENOTSUP for rlimits, umask, containment
 * and placement: such a command is then compared between clone and fork
 * only, and counted. On a
 * libc without a closefrom file action (musl), every command keeps the
 * inherited fds, since posix_spawn refuses close-others there.
 * glibc's posix_spawn leaves signals 32 and 33 ignored in the child of a
 * threaded parent (documented), so those two bits are not compared.
 *
 * A second case does the same for contained commands (fl_cmd.contain),
 * which only the clone and fork backends set up: see "contained commands"
 * below.
 */
#include "test.h"
#include "landlock_rules.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

/* ---- PRNG (splitmix64) ------------------------------------------------ */

static uint64_t rng;

static uint64_t next64(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned pick(unsigned n)
{
    return (unsigned)(next64() % n);
}

static bool chance(unsigned percent)
{
    return pick(100) < percent;
}

/* ---- one random command ----------------------------------------------- */

/* The parent's fds the maps may name: files at 3-6 (5 is FD_CLOEXEC), a
 * pipe at 7 (read) and 8 (write), and 0-2. */
enum { PARENT_FDS = 9 };

static const char *const env_names[] = { "FLD_A", "FLD_B", "FLD_C", "LANG", "HOME" };
static const int sig_pool[] = { SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2,
                                SIGPIPE, SIGTERM, SIGURG, SIGWINCH, SIGTSTP,
                                SIGTTIN, SIGTTOU, 40, 50, 64 };
enum { NSIG_POOL = sizeof sig_pool / sizeof sig_pool[0] };

struct gen {
    struct fl_cmd cmd;
    struct fl_fd_map maps[6];
    struct fl_rlimit rl[3];
    char *env_base[6];
    const char *env_set[5];
    const char *env_unset[4];
    sigset_t mask, dflt;
    /* The parent's state for FL_KEEP_SIGNALS. */
    sigset_t parent_block;
    int parent_ignore[4];
    int nignore;
    /* Containment and placement. */
    struct fl_contain contain;
    struct fl_sched sched;
    cpu_set_t cpus;
    struct t_rules rules;
    char desc[768];
};

static void describe(struct gen *g, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void describe(struct gen *g, const char *fmt, ...)
{
    size_t l = strlen(g->desc);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->desc + l, sizeof g->desc - l, fmt, ap);
    va_end(ap);
}

static char *rand_value(void)
{
    static const char *const vals[] = { "", "x", "with space", "a=b=c", "\n", "é" };
    return t_fmt("%s%u", vals[pick(6)], pick(1000));
}

/* The filter of the commands that have one: mkdir(2) and mkdirat(2) fail
 * with EPERM. Built once. */
static struct sock_fprog deny_mkdir;

static void make_filter(void)
{
    int nrs[2], n = 0;
    if (fl_syscall_number("mkdir") >= 0)
        nrs[n++] = fl_syscall_number("mkdir");
    nrs[n++] = fl_syscall_number("mkdirat");
    ASSERT_OK(fl_seccomp_deny(nrs, (size_t)n, EPERM, &deny_mkdir));
    t_keep(deny_mkdir.filter);
}

static int current_nice(void)
{
    errno = 0;
    int n = getpriority(PRIO_PROCESS, 0);
    return n == -1 && errno ? 0 : n;
}

static int current_oom_score_adj(void)
{
    return atoi(t_read_file("/proc/self/oom_score_adj"));
}

/* Containment and placement, drawn after everything else, so that the
 * earlier draws of a seed stay what they were. posix_spawn cannot take
 * them: they are drawn mostly for commands it refuses already (rlimits,
 * umask), so that it still takes part in most of the others. */
static void generate_contain(struct gen *g, const char *tmp)
{
    struct fl_cmd *c = &g->cmd;
    struct fl_contain *k = &g->contain;
    bool refused = c->nrlimits || (c->flags & FL_SET_UMASK);
    if (chance(refused ? 40 : 5)) {
        k->flags |= FL_NO_NEW_PRIVS;
        describe(g, "nnp ");
    }
    if (chance(refused ? 35 : 4)) {
        k->seccomp = &deny_mkdir;
        describe(g, "seccomp ");
    }
    if (chance(refused ? 35 : 4) && fl_landlock_abi() > 0) {
        g->rules = t_probe_rules();
        t_rule(&g->rules, tmp, FL_LANDLOCK_READ | FL_LANDLOCK_WRITE);
        t_rule(&g->rules, "/proc", FL_LANDLOCK_READ);   /* fds, signals, sched */
        k->landlock = g->rules.r;
        k->nlandlock = g->rules.n;
        if (fl_landlock_abi() < 5 || chance(30))
            k->flags |= FL_LANDLOCK_BEST_EFFORT;
        describe(g, "landlock%s ", k->flags & FL_LANDLOCK_BEST_EFFORT ? "-best-effort" : "");
    }
    if (k->flags || k->seccomp || k->nlandlock)
        c->contain = k;

    struct fl_sched *s = &g->sched;
    if (chance(refused ? 60 : 6)) {
        cpu_set_t mine;
        if (chance(50) && sched_getaffinity(0, sizeof mine, &mine) == 0) {
            CPU_ZERO(&g->cpus);
            for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
                if (CPU_ISSET(cpu, &mine) && chance(60))
                    CPU_SET(cpu, &g->cpus);
            if (CPU_COUNT(&g->cpus) == 0 && chance(50))
                CPU_SET(CPU_SETSIZE - 1, &g->cpus);   /* no CPU it may use: EINVAL */
            s->set |= FL_SCHED_CPUS;
            s->cpus = &g->cpus;
            s->cpus_size = sizeof g->cpus;
            describe(g, "cpus%d ", CPU_COUNT(&g->cpus));
        }
        if (chance(50)) {
            s->set |= FL_SCHED_NICE;
            int low = chance(15) ? -20 : current_nice();   /* lower: only with privilege */
            s->nice = low + (int)pick((unsigned)(20 - low));
            describe(g, "nice=%d ", s->nice);
        }
        if (chance(40)) {
            s->set |= FL_SCHED_IOPRIO;
            s->ioprio_class = 1 + (int)pick(3);
            s->ioprio_level = s->ioprio_class == FL_IOPRIO_IDLE ? 0 : (int)pick(8);
            describe(g, "ioprio=%d:%d ", s->ioprio_class, s->ioprio_level);
        }
        if (chance(40)) {
            s->set |= FL_SCHED_OOM_SCORE_ADJ;
            int low = chance(15) ? -1000 : current_oom_score_adj();
            s->oom_score_adj = low + (int)pick((unsigned)(1001 - low));
            describe(g, "oom=%d ", s->oom_score_adj);
        }
        s->best_effort = s->set & (unsigned)pick(16);
        if (s->set) {
            c->sched = s;
            describe(g, "best-effort=%x ", s->best_effort);
        }
    }
}

static void generate(struct gen *g, const char *tmp, const char *file)
{
    memset(g, 0, sizeof *g);
    struct fl_cmd *c = &g->cmd;

    /* stdio: leave fd 1 and 2 alone now and then, else null/fd/file. */
    for (int i = 0; i < 3; i++) {
        switch (pick(5)) {
        case 0: break;
        case 1: c->stdio[i].kind = FL_NULL; break;
        case 2: c->stdio[i] = (struct fl_stdio){ .kind = FL_FD, .fd = 3 + (int)pick(6) }; break;
        case 3: c->stdio[i] = (struct fl_stdio){ .kind = FL_FILE, .path = file,
                    .flags = i == 0 ? O_RDONLY : O_WRONLY | O_CREAT }; break;
        case 4: if (i == 2) c->stdio[i].kind = FL_TO_STDOUT; break;
        }
        describe(g, "stdio%d=%d ", i, (int)c->stdio[i].kind);
    }

    /* fd maps: distinct child fds 0-10, parents any of 0-8; now and then a
     * forced cycle 3<-4, 4<-3. */
    size_t n = 0;
    if (chance(25)) {
        g->maps[n++] = (struct fl_fd_map){ 3, 4 };
        g->maps[n++] = (struct fl_fd_map){ 4, 3 };
    }
    unsigned want = pick(5);
    for (unsigned k = 0; k < want && n < 6; k++) {
        int child = (int)pick(11);
        bool dup = false;
        for (size_t j = 0; j < n; j++)
            dup |= g->maps[j].child_fd == child;
        if (dup)
            continue;
        int parent = chance(20) ? child : (int)pick(PARENT_FDS);
        if (child == 9 || child == 10)
            parent = (int)pick(PARENT_FDS);
        g->maps[n++] = (struct fl_fd_map){ child, parent };
    }
    c->fds = n ? g->maps : NULL;
    c->nfds = n;
    for (size_t j = 0; j < n; j++)
        describe(g, "map%d<-%d ", g->maps[j].child_fd, g->maps[j].parent_fd);

    /* Where the libc's posix_spawn cannot close fds (no closefrom file
     * action), every command keeps them, so that it still takes part. */
    if (chance(20) || !FL_T_POSIX_SPAWN_CLOSES_FDS) {
        c->flags |= FL_KEEP_FDS;
        describe(g, "keep-fds ");
    }

    /* Environment. */
    if (chance(15)) {
        c->flags |= FL_ENV_CLEAR;
        describe(g, "env-clear ");
    } else if (chance(30)) {
        int nb = (int)pick(5);
        for (int i = 0; i < nb; i++)
            g->env_base[i] = t_fmt("%s=%s", env_names[pick(5)], rand_value());
        c->env = g->env_base;
        describe(g, "env-base%d ", nb);
    }
    int ns = (int)pick(5), nu = (int)pick(4);
    for (int i = 0; i < ns; i++)
        g->env_set[i] = t_fmt("%s=%s", env_names[pick(5)], rand_value());
    for (int i = 0; i < nu; i++)
        g->env_unset[i] = env_names[pick(5)];
    c->env_set = ns ? g->env_set : NULL;
    c->env_unset = nu ? g->env_unset : NULL;
    describe(g, "set%d unset%d ", ns, nu);

    /* cwd. */
    static const char *const cwds[] = { NULL, "/", "/tmp", "/proc", NULL };
    c->cwd = pick(6) == 5 ? tmp : cwds[pick(5)];
    describe(g, "cwd=%s ", c->cwd ? c->cwd : "-");

    /* rlimits, within what we may set (at most our hard limit). */
    if (chance(30)) {
        static const int res[] = { RLIMIT_NOFILE, RLIMIT_CORE, RLIMIT_CPU,
                                   RLIMIT_MSGQUEUE, RLIMIT_FSIZE };
        int nr = 1 + (int)pick(3);
        for (int i = 0; i < nr; i++) {
            int r = res[pick(5)];
            struct rlimit cur;
            getrlimit(r, &cur);
            rlim_t hard = chance(50) ? cur.rlim_max
                          : cur.rlim_max == RLIM_INFINITY ? 1u << 20
                                                          : cur.rlim_max / 2;
            if (r == RLIMIT_NOFILE && hard < 64)
                hard = cur.rlim_max;
            rlim_t soft = hard == RLIM_INFINITY ? (chance(50) ? RLIM_INFINITY : 4096)
                                                : hard / (1 + pick(4));
            if (r == RLIMIT_NOFILE && soft < 64)
                soft = hard;
            g->rl[i] = (struct fl_rlimit){ r, soft, hard };
            describe(g, "rlimit%d=%llu:%llu ", r, (unsigned long long)soft,
                     (unsigned long long)hard);
        }
        c->rlimits = g->rl;
        c->nrlimits = (size_t)nr;
    }
    if (chance(25)) {
        c->flags |= FL_SET_UMASK;
        c->umask = (mode_t)pick(01000);
        describe(g, "umask=%03o ", (unsigned)c->umask);
    }

    /* Signals: the mask, FL_KEEP_SIGNALS with the parent's state. */
    sigemptyset(&g->mask);
    sigemptyset(&g->dflt);
    sigemptyset(&g->parent_block);
    if (chance(50)) {
        for (int k = (int)pick(5); k > 0; k--)
            sigaddset(&g->mask, sig_pool[pick(NSIG_POOL)]);
        if (chance(10))
            sigaddset(&g->mask, SIGKILL); /* the kernel drops it */
        c->sigmask = &g->mask;
        describe(g, "sigmask ");
    }
    if (chance(35)) {
        c->flags |= FL_KEEP_SIGNALS;
        for (int k = (int)pick(4); k > 0; k--)
            sigaddset(&g->parent_block, sig_pool[pick(NSIG_POOL)]);
        g->nignore = (int)pick(5);
        for (int k = 0; k < g->nignore; k++)
            g->parent_ignore[k] = sig_pool[pick(NSIG_POOL)];
        if (chance(50)) {
            for (int k = (int)pick(3); k > 0; k--)
                sigaddset(&g->dflt, sig_pool[pick(NSIG_POOL)]);
            c->sigdefault = &g->dflt;
        }
        describe(g, "keep-signals ign%d ", g->nignore);
    }

    /* Session and group. */
    switch (pick(6)) {
    case 0: c->flags |= FL_SETSID; describe(g, "setsid "); break;
    case 1: c->flags |= FL_NEW_PGROUP; describe(g, "pgroup "); break;
    case 2:
        c->flags |= FL_JOIN_PGROUP;
        c->pgid = getpgrp();
        describe(g, "join-pgroup ");
        break;
    default: break;
    }

    generate_contain(g, tmp);
}

/* ---- running one command with one backend ----------------------------- */

/* Keeps the lines that must agree, with the process ids turned into
 * relations and glibc's 32/33 taken out of SigIgn/SigBlk. */
static char *normalize(const char *out)
{
    char *res = t_keep(calloc(1, strlen(out) + 256));
    long long pid = t_get_num(out, "pid");
    long long pgid = t_get_num(out, "pgid");
    long long sid = t_get_num(out, "sid");
    const unsigned long long glibc = SIGBIT(32) | SIGBIT(33);
    for (const char *l = out; *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        if (!strncmp(l, "SigBlk ", 7) || !strncmp(l, "SigIgn ", 7)) {
            unsigned long long m = strtoull(l + 7, NULL, 16) & ~glibc;
            sprintf(res + strlen(res), "%.6s %016llx\n", l, m);
        } else if (strncmp(l, "pid ", 4) && strncmp(l, "pgid ", 5) &&
                   strncmp(l, "sid ", 4)) {
            strncat(res, l, len);
            strcat(res, "\n");
        }
        l += len + (e != NULL);
    }
    sprintf(res + strlen(res), "pgid==pid %d\nsid==pid %d\npgid==ours %d\n",
            pgid == pid, sid == pid, pgid == (long long)getpgrp());
    return res;
}

struct outcome {
    bool ran;        /* false: ENOTSUP from posix_spawn */
    char *text;      /* normalized report, or "spawn failed: E" */
};

/* What the child may do: mkdir (the filter denies it), a write outside
 * the Landlock rules. Made and removed around each run, the same paths for
 * every backend. */
struct acts {
    char *mkdir_path, *write_path;
};

static struct outcome run_one(struct gen *g, enum fl_backend b,
                              const char *outpath, const struct acts *a, int *spawns)
{
    struct fl_cmd c = g->cmd;
    c.backend = b;
    c.argv = ARGV(fl_test_probe, "--out", (char *)outpath, "fds", "signals",
                  "cwd", "env", "rlimits", "umask", "proc", "nnp", "seccomp-mode",
                  "sched", "try-mkdir", a->mkdir_path, "try-write", a->write_path);
    unlink(outpath);
    rmdir(a->mkdir_path);
    unlink(a->write_path);

    /* The parent's signal state for FL_KEEP_SIGNALS, restored after. */
    sigset_t oldmask;
    struct sigaction oldact[4];
    pthread_sigmask(SIG_BLOCK, &g->parent_block, &oldmask);
    for (int k = 0; k < g->nignore; k++)
        sigaction(g->parent_ignore[k],
                  &(struct sigaction){ .sa_handler = SIG_IGN }, &oldact[k]);

    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&c, &p, &e);
    (*spawns)++;

    for (int k = g->nignore - 1; k >= 0; k--)
        sigaction(g->parent_ignore[k], &oldact[k], NULL);
    pthread_sigmask(SIG_SETMASK, &oldmask, NULL);

    bool unsupported = c.nrlimits > 0 || (c.flags & FL_SET_UMASK) || c.contain || c.sched;
    if (b == FL_BACKEND_POSIX_SPAWN && unsupported) {
        if (r != ENOTSUP)
            FAIL("posix_spawn: expected ENOTSUP for %s, got %d (%s)", g->desc,
                 r, fl_t_errname(r));
        ASSERT_EQ(p.pid, 0);
        return (struct outcome){ .ran = false };
    }
    if (r != 0) {
        ASSERT_EQ(p.pid, 0);
        char buf[400];
        if (getenv("FL_DIFF_VERBOSE"))
            printf("  %s: %s\n", fl_backend_name(b),
                   fl_error_format(&e, buf, sizeof buf));
        return (struct outcome){ .ran = true,
                                 .text = t_fmt("spawn failed: %s\n",
                                               fl_t_errname(r)) };
    }
    unsigned not_applied = p.not_applied, unenforced = p.landlock_unenforced;
    int st = t_wait(&p);
    rmdir(a->mkdir_path);
    unlink(a->write_path);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return (struct outcome){ .ran = true,
                                 .text = t_fmt("probe status 0x%x\n", st) };
    return (struct outcome){ .ran = true,
                             .text = t_fmt("%snot_applied %x\nlandlock_unenforced %x\n",
                                           normalize(t_read_file(outpath)), not_applied,
                                           unenforced) };
}

/* The first line where a and b differ, for the message. */
static const char *first_diff(const char *a, const char *b, char *buf, size_t n)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    while (*a && a[-1] != '\n')
        a--;
    while (*b && b[-1] != '\n')
        b--;
    snprintf(buf, n, "\"%.*s\" vs \"%.*s\"", (int)strcspn(a, "\n"), a,
             (int)strcspn(b, "\n"), b);
    return buf;
}

TEST(backends_agree_on_random_commands)
{
    const char *cases_env = getenv("FL_DIFF_CASES");
    const char *seed_env = getenv("FL_DIFF_SEED");
    int ncases = cases_env ? atoi(cases_env) : 150;
    uint64_t seed;
    if (seed_env)
        seed = strtoull(seed_env, NULL, 0);
    else if (cases_env) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
    } else
        seed = 0x5eed;
    printf("differential: seed 0x%llx, %d cases (FL_DIFF_SEED=0x%llx to repeat)\n",
           (unsigned long long)seed, ncases, (unsigned long long)seed);

    /* This CTest run's share. */
    int share = BACKEND == FL_BACKEND_CLONE ? 0
                : BACKEND == FL_BACKEND_POSIX_SPAWN ? 1
                : BACKEND == FL_BACKEND_FORK ? 2 : -1;

    char *tmp = t_tmpdir();
    char *file = t_write_file(tmp, "file", "data\n", 0644);
    char *elsewhere = t_tmpdir();   /* beneath no Landlock rule */
    make_filter();
    t_file_at(3, false);
    t_file_at(4, false);
    t_file_at(5, true);
    t_file_at(6, false);
    int pfd[2];
    ASSERT_SYS(pipe(pfd));
    for (int k = 0; k < 2; k++) {
        int hi = fcntl(pfd[k], F_DUPFD, 100);
        ASSERT_SYS(hi);
        close(pfd[k]);
        pfd[k] = hi;
    }
    ASSERT_SYS(dup2(pfd[0], 7));
    ASSERT_SYS(dup2(pfd[1], 8));
    close(pfd[0]);
    close(pfd[1]);

    static const enum fl_backend all[] = { FL_BACKEND_CLONE,
                                           FL_BACKEND_POSIX_SPAWN,
                                           FL_BACKEND_FORK };
    int spawns = 0, done = 0, skipped = 0, spawn_errors = 0, contained = 0;
    for (int i = 0; i < ncases; i++) {
        if (share >= 0 && i % 3 != share)
            continue;
        rng = seed + (uint64_t)i * 0x100000001b3ull;
        struct gen g;
        generate(&g, tmp, file);
        contained += g.cmd.contain || g.cmd.sched;
        struct outcome o[3];
        int ref = -1;
        for (int k = 0; k < 3; k++) {
            char *path = t_fmt("%s/out.%d.%d", tmp, i, k);
            struct acts a = { t_fmt("%s/mk.%d", tmp, i), t_fmt("%s/w.%d", elsewhere, i) };
            o[k] = run_one(&g, all[k], path, &a, &spawns);
            unlink(path);
            if (!o[k].ran) {
                skipped++;
                continue;
            }
            if (!strncmp(o[k].text, "spawn failed", 12)) {
                spawn_errors++;
                if (getenv("FL_DIFF_VERBOSE"))
                    printf("case %d %s: %s  command: %s\n", i,
                           fl_backend_name(all[k]), o[k].text, g.desc);
            }
            if (ref < 0) {
                ref = k;
                continue;
            }
            if (strcmp(o[ref].text, o[k].text) != 0) {
                char buf[600];
                FAIL("case %d (seed 0x%llx): %s and %s differ: %s\ncommand: %s\n"
                     "--- %s:\n%s--- %s:\n%s",
                     i, (unsigned long long)seed, fl_backend_name(all[ref]),
                     fl_backend_name(all[k]),
                     first_diff(o[ref].text, o[k].text, buf, sizeof buf), g.desc,
                     fl_backend_name(all[ref]), o[ref].text,
                     fl_backend_name(all[k]), o[k].text);
            }
        }
        done++;
    }
    for (int fd = 3; fd <= 8; fd++)
        close(fd);
    printf("REPORT scenario=differential.%s spawns=%d cases=%d failures=0 "
           "pitfalls=posix_spawn_enotsup_skipped:%d,spawn_errors_agreed:%d,"
           "glibc_sig32_33_masked contain_or_sched=%d\n",
           fl_backend_name(BACKEND), spawns, done, skipped, spawn_errors, contained);
}

/* ---- contained commands: clone and fork must agree ------------------------ */

/*
 * Random fl_cmd.contain settings (namespaces, maps, host name, a fresh
 * /proc, bounding and ambient capabilities, no_new_privs, credentials),
 * each spawned with the clone and the fork backend, which must report the
 * same: the same namespaces new and the same ones the caller's (not their
 * inode numbers, new for every spawn), the same ids, maps, host name,
 * interfaces, root, /proc and capability sets, or the same error. The
 * posix_spawn backend must refuse each of them with ENOTSUP. As root the
 * case runs again as uid 65534, where every command gets a user namespace.
 *
 *   FL_DIFF_CONTAIN_CASES=N   how many commands (default 90, split as above)
 */
#include "contain.h"

#define NET_BIND_SERVICE 10

static const struct {
    unsigned bit;
    const char *name;
} diff_ns[] = {
    { FL_NS_USER, "user" }, { FL_NS_MOUNT, "mnt" },     { FL_NS_PID, "pid" },
    { FL_NS_NET, "net" },   { FL_NS_IPC, "ipc" },       { FL_NS_UTS, "uts" },
    { FL_NS_CGROUP, "cgroup" }, { FL_NS_TIME, "time" },
};

struct cgen {
    struct fl_contain c;
    struct fl_cmd cmd;
    char host[32];
    char desc[512];
};

static void describe_c(struct cgen *g, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void describe_c(struct cgen *g, const char *fmt, ...)
{
    size_t l = strlen(g->desc);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->desc + l, sizeof g->desc - l, fmt, ap);
    va_end(ap);
}

static void generate_contained(struct cgen *g, bool root)
{
    memset(g, 0, sizeof *g);
    struct fl_contain *c = &g->c;
    bool time_ns = access("/proc/self/ns/time", F_OK) == 0;
    for (size_t i = 0; i < sizeof diff_ns / sizeof *diff_ns; i++)
        if (chance(35) && (diff_ns[i].bit != FL_NS_TIME || time_ns))
            c->unshare |= diff_ns[i].bit;
    if (!root)
        c->unshare |= FL_NS_USER;
    if (c->unshare & FL_NS_USER)
        c->map = (enum fl_id_map)pick(3);
    if ((c->unshare & FL_NS_UTS) && chance(60)) {
        snprintf(g->host, sizeof g->host, "h%u", pick(1000));
        c->hostname = g->host;
    }
    if ((c->unshare & (FL_NS_MOUNT | FL_NS_PID)) == (FL_NS_MOUNT | FL_NS_PID) && chance(70))
        c->flags |= FL_MOUNT_PROC;
    if (chance(25))
        c->flags |= FL_NO_NEW_PRIVS;
    if (chance(25)) {
        c->flags |= FL_CAP_BOUNDING;
        c->cap_bounding = next64() & ((1ULL << 41) - 1);
    }
    if (chance(25))
        c->cap_ambient = 1ULL << (chance(50) ? NET_BIND_SERVICE : 5 /* CAP_KILL */);
    /* An ambient capability outside the bounding set is EINVAL as the
     * command is checked (test_caps.c): keep the draw a valid command. */
    if (c->flags & FL_CAP_BOUNDING)
        c->cap_bounding |= c->cap_ambient;
    describe_c(g, "unshare=%#x map=%d host=%s flags=%#x bnd=%#llx amb=%#llx ", c->unshare,
               (int)c->map, c->hostname ? c->hostname : "-", c->flags,
               (unsigned long long)c->cap_bounding, (unsigned long long)c->cap_ambient);
    g->cmd.contain = c;
    if (chance(30)) {
        g->cmd.flags |= FL_SET_UID | FL_SET_GID;
        g->cmd.uid = g->cmd.gid = chance(50) ? 65534 : 0;
        describe_c(g, "ids=%u ", (unsigned)g->cmd.uid);
    }
    if (chance(30)) {
        g->cmd.flags |= FL_SETSID;
        describe_c(g, "setsid ");
    }
}

/* The lines that must agree: namespaces as "new" or "caller", pids only
 * where they are the new namespace's, no mount table (the caller's, but
 * for the mount on / and /proc's count where the child mounted it). */
static char *normalize_contained(const char *out, const struct cgen *g)
{
    char *res = t_keep(calloc(1, strlen(out) + 1024));
    bool own_pid = g->c.unshare & FL_NS_PID;
    for (const char *l = out; *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)len, l);
        l += len + (e != NULL);
        char name[64], value[64];
        if (!strncmp(line, "ns_", 3) && sscanf(line, "ns_%63s %63s", name, value) == 2) {
            char *base = t_strdup(name);
            char *suffix = strstr(base, "_for_children");
            if (suffix)
                *suffix = 0;
            sprintf(res + strlen(res), "ns_%s %s\n", name,
                    strcmp(value, t_own_ns(base)) ? "new" : "caller");
            continue;
        }
        if (!strncmp(line, "mount ", 6))
            continue;
        if (!strncmp(line, "mount_proc_pids ", 16) && !(g->c.flags & FL_MOUNT_PROC))
            continue;
        if (!own_pid && (!strncmp(line, "pid ", 4) || !strncmp(line, "pgid ", 5) ||
                         !strncmp(line, "sid ", 4)))
            continue;
        strcat(res, line);
        strcat(res, "\n");
    }
    return res;
}

static char *run_contained(const struct cgen *g, enum fl_backend b, int *spawns, bool *ran)
{
    struct fl_cmd c = g->cmd;
    c.backend = b;
    c.argv = ARGV(fl_test_probe, "ns", "caps", "ids", "proc");
    c.stdio[1].kind = FL_PIPE;
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&c, &p, &e);
    (*spawns)++;
    *ran = true;
    if (b == FL_BACKEND_POSIX_SPAWN) {
        /* Only a command with nothing to contain and no ids may run. */
        bool contained = g->c.unshare || g->c.map || g->c.hostname || g->c.flags ||
                         g->c.cap_ambient || (g->cmd.flags & FL_SET_UID);
        if (contained) {
            if (r != ENOTSUP || e.step != FL_STEP_PREPARE ||
                !strstr(e.detail, "posix_spawn cannot set"))
                FAIL("posix_spawn: expected ENOTSUP at prepare for %s, got %d (%s) at %s",
                     g->desc, r, fl_t_errname(r), fl_step_name(e.step));
            ASSERT_EQ(p.pid, 0);
            *ran = false;
            return NULL;
        }
    }
    if (r != 0) {
        ASSERT_EQ(p.pid, 0);
        return t_fmt("spawn failed: %s at %s index %d\n", fl_t_errname(r),
                     fl_step_name(e.step), e.index);
    }
    char *out = t_read_all(p.stdio[1]);
    close(p.stdio[1]);
    p.stdio[1] = -1;
    int st = t_wait(&p);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return t_fmt("probe status 0x%x\n", st);
    return normalize_contained(out, g);
}

TEST(backends_agree_on_contained_commands)
{
    const char *cases_env = getenv("FL_DIFF_CONTAIN_CASES");
    const char *seed_env = getenv("FL_DIFF_SEED");
    int ncases = cases_env ? atoi(cases_env) : 90;
    uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : 0xc0a7a1;
    bool root = geteuid() == 0;
    printf("differential (contained, %s): seed 0x%llx, %d cases\n",
           root ? "root" : "unprivileged", (unsigned long long)seed, ncases);
    int share = BACKEND == FL_BACKEND_CLONE ? 0
                : BACKEND == FL_BACKEND_POSIX_SPAWN ? 1
                : BACKEND == FL_BACKEND_FORK ? 2 : -1;
    static const enum fl_backend all[] = { FL_BACKEND_CLONE, FL_BACKEND_FORK,
                                           FL_BACKEND_POSIX_SPAWN };
    int spawns = 0, done = 0, refused = 0, failed_alike = 0;
    for (int i = 0; i < ncases; i++) {
        if (share >= 0 && i % 3 != share)
            continue;
        rng = seed + (uint64_t)i * 0x100000001b3ull + (root ? 0 : 7);
        struct cgen g;
        generate_contained(&g, root);
        char *text[3];
        bool ran[3];
        for (int k = 0; k < 3; k++) {
            text[k] = run_contained(&g, all[k], &spawns, &ran[k]);
            if (!ran[k]) {
                refused++;
                continue;
            }
            if (k == 0) {
                failed_alike += !strncmp(text[0], "spawn failed", 12);
                if (getenv("FL_DIFF_VERBOSE") && !strncmp(text[0], "spawn failed", 12))
                    printf("case %d: %s  command: %s\n", i, text[0], g.desc);
                continue;
            }
            if (strcmp(text[0], text[k]) != 0) {
                char buf[600];
                FAIL("case %d (seed 0x%llx): clone and %s differ: %s\ncommand: %s\n"
                     "--- clone:\n%s--- %s:\n%s",
                     i, (unsigned long long)seed, fl_backend_name(all[k]),
                     first_diff(text[0], text[k], buf, sizeof buf), g.desc, text[0],
                     fl_backend_name(all[k]), text[k]);
            }
        }
        done++;
    }
    printf("REPORT scenario=differential.contained.%s.%s spawns=%d cases=%d failures=0 "
           "pitfalls=posix_spawn_enotsup:%d,spawn_errors_agreed:%d\n",
           root ? "root" : "nobody", fl_backend_name(BACKEND), spawns, done, refused,
           failed_alike);
    t_rerun_as_nobody();
}
