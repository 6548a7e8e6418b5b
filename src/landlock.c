/* landlock.c: the Landlock ruleset, built in the parent. Opening the paths
 * and adding the rules may fail (a missing path, a path too long): here
 * that fails the spawn before any child exists, naming the path. The
 * child only calls landlock_restrict_self() on the fd (contain.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "sys.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#endif

/* The file system rights, as <linux/landlock.h> numbers them (kept here
 * so that older headers build); the ABI that brought each. */
enum {
    FS_EXECUTE = 1 << 0, FS_WRITE_FILE = 1 << 1, FS_READ_FILE = 1 << 2,
    FS_READ_DIR = 1 << 3, FS_REMOVE_DIR = 1 << 4, FS_REMOVE_FILE = 1 << 5,
    FS_MAKE_CHAR = 1 << 6, FS_MAKE_DIR = 1 << 7, FS_MAKE_REG = 1 << 8,
    FS_MAKE_SOCK = 1 << 9, FS_MAKE_FIFO = 1 << 10, FS_MAKE_BLOCK = 1 << 11,
    FS_MAKE_SYM = 1 << 12,                 /* ABI 1 */
    FS_REFER = 1 << 13,                    /* ABI 2 */
    FS_TRUNCATE = 1 << 14,                 /* ABI 3 */
    FS_IOCTL_DEV = 1 << 15,                /* ABI 5 */
};
#define FS_ALL 0xffffu
/* The ABI that has every right above. */
#define FULL_ABI 5
/* The rights that apply to a file rather than a directory's entries. */
#define FS_FILE (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)

struct ruleset_attr {
    uint64_t handled_access_fs;
};

struct __attribute__((packed)) path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
};

/* The kernel's answer does not change while it runs: asked once (a race
 * only asks twice), not on every spawn with a ruleset. It is
 * async-signal-safe: a refusal (no Landlock) leaves errno alone, also
 * where fl__sys3() is libc's syscall(), which sets it. */
int fl_landlock_abi(void)
{
    static int cached = -1;
    int abi = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (abi >= 0)
        return abi;
    int saved_errno = errno;
    long v = fl__sys3(SYS_landlock_create_ruleset, NULL, 0, 1u /* _VERSION */);
    errno = saved_errno;
    abi = v < 0 ? 0 : (int)v;
    __atomic_store_n(&cached, abi, __ATOMIC_RELAXED);
    return abi;
}

static unsigned rights_of_abi(int abi)
{
    if (abi >= FULL_ABI)
        return FS_ALL;
    if (abi >= 3)
        return FS_ALL & ~FS_IOCTL_DEV;
    if (abi == 2)
        return FS_ALL & ~(FS_IOCTL_DEV | FS_TRUNCATE);
    return abi == 1 ? FS_REFER - 1 : 0;
}

static uint64_t rights_of(unsigned access)
{
    uint64_t r = 0;
    if (access & FL_LANDLOCK_READ)
        r |= FS_READ_FILE | FS_READ_DIR;
    if (access & FL_LANDLOCK_EXEC)
        r |= FS_EXECUTE;
    if (access & FL_LANDLOCK_WRITE)
        r |= FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR |
             FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM |
             FS_REFER | FS_TRUNCATE | FS_IOCTL_DEV;
    return r;
}

/* A directory, the usual rule, is opened with O_DIRECTORY, which says that
 * it is one without an fstat(); anything else is opened again without. */
static int add_rule(int ruleset, const struct fl_landlock_path *rule, uint64_t handled)
{
    int fd = open(rule->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    bool dir = fd >= 0;
    if (!dir && errno == ENOTDIR)
        fd = open(rule->path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return errno;
    struct stat st;
    int r = !dir && fstat(fd, &st) < 0 ? errno : 0;
    struct path_beneath_attr a = { .allowed_access = rights_of(rule->access) & handled,
                                   .parent_fd = fd };
    if (!r && !dir && !S_ISDIR(st.st_mode))
        a.allowed_access &= FS_FILE;
    /* Nothing of it that the kernel restricts (write on a file where the
     * kernel is too old for more than a directory's rights): nothing to
     * allow either. */
    if (!r && a.allowed_access &&
        syscall(SYS_landlock_add_rule, ruleset, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &a, 0) < 0)
        r = errno;
    close(fd);
    return r;
}

int fl__landlock_build(const struct fl_contain *c, struct fl__box *b, struct fl_error *e)
{
    int abi = fl_landlock_abi();
    bool best_effort = c->flags & FL_LANDLOCK_BEST_EFFORT;
    if (abi < FULL_ABI && !best_effort) {
        char why[FL_ERROR_DETAIL_MAX] = "the kernel has no Landlock "
                                        "(FL_LANDLOCK_BEST_EFFORT goes on without)";
        if (abi)
            snprintf(why, sizeof why, "the kernel's Landlock ABI is %d; every right needs %d "
                     "(FL_LANDLOCK_BEST_EFFORT uses what it has)", abi, FULL_ABI);
        return fl__fail(e, ENOTSUP, FL_STEP_LANDLOCK, -1, "", why);
    }
    uint64_t handled = rights_of_abi(abi);
    /* ABI 1 has no REFER right, but its rulesets deny every reparenting
     * (EXDEV), write rules or not: REFER is not left allowed there. */
    b->landlock_unenforced = (unsigned)(FS_ALL & ~handled & ~(abi ? FS_REFER : 0));
    /* Without Landlock (best effort) there is no ruleset, but a missing
     * path is still the error the header promises: add_rule() opens each
     * and, with nothing handled, adds nothing. */
    long fd = -1;
    if (handled) {
        struct ruleset_attr attr = { .handled_access_fs = handled };
        fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
        if (fd < 0)
            return fl__fail(e, errno, FL_STEP_LANDLOCK, -1, "", "landlock_create_ruleset");
    }
    for (size_t i = 0; i < c->nlandlock; i++) {
        int r = add_rule((int)fd, &c->landlock[i], handled);
        if (r) {
            if (fd >= 0)
                close((int)fd);
            return fl__fail(e, r, FL_STEP_LANDLOCK, (int)i, c->landlock[i].path, "");
        }
    }
    b->landlock_fd = (int)fd;
    return 0;
}
