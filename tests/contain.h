/*
 * contain.h: helpers of the containment cases (test_contain.c,
 * test_caps.c, test_differential.c).
 */
#ifndef FL_TEST_CONTAIN_H
#define FL_TEST_CONTAIN_H

#include "test.h"

#include <fcntl.h>
#include <sys/stat.h>

#ifndef FL_PROBE_STATIC
#define FL_PROBE_STATIC ""
#endif

/* The inode of this process's namespace NAME (as in /proc/self/ns), as
 * the probe's "ns_NAME" reports it. */
static inline char *t_own_ns(const char *name)
{
    char path[64], link[256];
    snprintf(path, sizeof path, "/proc/self/ns/%s", name);
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0)
        FAIL("readlink %s: %s", path, strerror(errno));
    link[n] = 0;
    const char *b = strchr(link, '[');
    if (!b)
        FAIL("%s reads \"%s\"", path, link);
    return t_fmt("%lu", strtoul(b + 1, NULL, 10));
}

static inline bool t_is_root(void)
{
    return geteuid() == 0;
}

/* The kernel's overflow id, which ids without a map read as. */
static inline long t_overflow_id(const char *which)
{
    const char *path = t_fmt("/proc/sys/kernel/overflow%s", which);
    if (access(path, R_OK) != 0)
        SKIP(t_fmt("no %s to read the overflow id from", path));
    return strtol(t_read_file(path), NULL, 10);
}

/* The statically linked probe, for a root that holds nothing else, or
 * NULL when the toolchain could not build one. As root, a copy that uid
 * 65534 can read too, handed to a re-run through the environment. */
static inline const char *t_static_probe(void)
{
    const char *env = getenv("FL_TEST_PROBE_STATIC");
    if (env)
        return env;
    if (!FL_PROBE_STATIC[0])
        return NULL;
    const char *p = t_is_root() ? t_exe_for_anyone(FL_PROBE_STATIC) : FL_PROBE_STATIC;
    setenv("FL_TEST_PROBE_STATIC", p, 1);
    return p;
}

/* A fresh directory holding the static probe as /probe (mode 0755), with
 * an empty /proc when with_proc: a root for .chroot. Skips without a
 * static probe. */
static inline char *t_make_root(bool with_proc)
{
    const char *probe = t_static_probe();
    if (!probe)
        SKIP("no statically linked probe (this toolchain cannot link -static): "
             "nothing to run inside a chroot");
    char *root = t_tmpdir();
    ASSERT_SYS(chmod(root, 0755));
    int src = open(probe, O_RDONLY | O_CLOEXEC);
    if (src < 0)
        FAIL("open %s: %s", probe, strerror(errno));
    char *dst_path = t_fmt("%s/probe", root);
    int dst = open(dst_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
    ASSERT_SYS(dst);
    char buf[65536];
    ssize_t n;
    while ((n = read(src, buf, sizeof buf)) > 0)
        t_write_all(dst, buf, (size_t)n);
    ASSERT_SYS(n);
    ASSERT_SYS(fchmod(dst, 0755));
    close(src);
    ASSERT_SYS(close(dst));
    if (with_proc)
        ASSERT_SYS(mkdir(t_fmt("%s/proc", root), 0555));
    return root;
}

/* Whether this process's /proc/self/mountinfo has a mount on point. */
static inline bool t_own_mount_at(const char *point)
{
    char *info = t_read_file("/proc/self/mountinfo");
    for (char *l = info; l && *l;) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        char at[4096];   /* "ID PARENT MAJ:MIN ROOT POINT ...": the fifth */
        if (sscanf(l, "%*s %*s %*s %*s %4095s", at) == 1 && strcmp(at, point) == 0)
            return true;
        l = nl ? nl + 1 : NULL;
    }
    return false;
}

/* A 64-bit mask from the probe's "KEY HEX" line. */
static inline unsigned long long t_hex(const char *out, const char *key)
{
    char *v = t_get(out, key);
    if (!v)
        FAIL("no \"%s\" in the probe's output:\n%s", key, out);
    return strtoull(v, NULL, 16);
}

#endif
