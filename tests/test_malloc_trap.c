/* Pitfall 42: the code between clone and exec must not allocate. This
 * program replaces malloc and friends with versions that kill the caller
 * (exit 99) when any process other than the test itself calls them: a
 * CLONE_VM child that allocated would then end with 99 instead of running
 * its program. Another thread keeps the allocator busy all the while, so a
 * child that took the allocator's lock would hang (the runner's watchdog
 * reports that). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#define FL_TRAP_DISABLED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FL_TRAP_DISABLED 1
#endif
#endif

#ifndef FL_TRAP_DISABLED
#if defined(__GLIBC__)
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
#define real_malloc __libc_malloc
#define real_calloc __libc_calloc
#define real_realloc __libc_realloc
#define real_free __libc_free
#else
/* musl exports no __libc_malloc; its own malloc is the next definition
 * (musl's dlsym does not allocate, so looking it up cannot recurse). It is
 * looked up at the first call, which may come before any constructor. */
#include <dlfcn.h>
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static void find_next_allocator(void)
{
    if (next_malloc)
        return;
    next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    void *(*m)(size_t) = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    if (!m || !next_calloc || !next_realloc || !next_free)
        abort();
    next_malloc = m;   /* last: it says the others are set */
}
__attribute__((constructor(101))) static void resolve_before_threads(void)
{
    find_next_allocator();
}
#define real_malloc (find_next_allocator(), next_malloc)
#define real_calloc (find_next_allocator(), next_calloc)
#define real_realloc (find_next_allocator(), next_realloc)
#define real_free (find_next_allocator(), next_free)
#endif

static atomic_int owner;

static void trap_foreign_caller(void)
{
    int o = atomic_load_explicit(&owner, memory_order_relaxed);
    if (o && syscall(SYS_getpid) != o) {
        static const char msg[] = "malloc called in the child\n";
        syscall(SYS_write, 2, msg, sizeof msg - 1);
        syscall(SYS_exit_group, 99);
    }
}

void *malloc(size_t n)
{
    trap_foreign_caller();
    return real_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    trap_foreign_caller();
    return real_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    trap_foreign_caller();
    return real_realloc(p, n);
}

void free(void *p)
{
    trap_foreign_caller();
    real_free(p);
}

static atomic_bool stop;

static void *churn(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        void *p = malloc(64 + (rand() & 4095));
        free(p);
    }
    return NULL;
}
#endif

TEST(spawning_with_every_option_never_allocates_in_the_child) /* stress */
{
#ifdef FL_TRAP_DISABLED
    SKIP("the sanitizer owns malloc in this build");
#else
    char *dir = t_tmpdir();
    int extra = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ASSERT_SYS(extra);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR2);
    static const struct fl_rlimit no_core[] = { { RLIMIT_CORE, 0, 0 } };
    bool full = BACKEND != FL_BACKEND_POSIX_SPAWN;
    /* "true" is searched for, in a PATH of its own: the search is one of
     * the options, and the test's own PATH may have nothing to search. */
    const char *path = t_tools_path();
    atomic_store(&owner, (int)getpid());
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, churn, NULL));
    int n = t_scaled(300);
    for (int i = 0; i < n; i++) {
        struct fl_cmd cmd = {
            .argv = ARGV("true"),
            .cwd = dir,
            .env_set = (const char *const[]){ "FL_TRAP=1", path, NULL },
            .env_unset = (const char *const[]){ "HOME", NULL },
            .stdio = { { .kind = FL_PIPE }, { .kind = FL_NULL }, { .kind = FL_TO_STDOUT } },
            .fds = (struct fl_fd_map[]){ { 3, extra }, { 4, extra } },
            .nfds = 2,
            .flags = FL_NEW_PGROUP | FL_SHELL_FALLBACK,
            .sigmask = &mask,
            .backend = BACKEND,
        };
        if (full) {
            cmd.rlimits = no_core;
            cmd.nrlimits = 1;
            cmd.flags |= FL_SET_UMASK;
            cmd.umask = 027;
        }
        struct fl_proc p;
        SPAWN(&cmd, &p);
        ASSERT_EXITED(t_wait(&p), 0);
    }
    atomic_store(&stop, true);
    pthread_join(t, NULL);
    atomic_store(&owner, 0);
    close(extra);
    printf("REPORT scenario=malloc_trap backend=%s spawns=%d failures=0 pitfalls=42\n",
           fl_backend_name(BACKEND), n);
#endif
}
