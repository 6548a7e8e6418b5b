/*
 * landlock_rules.h: the Landlock rules a spawned probe needs to start at
 * all, computed at run time (test_landlock.c, test_differential.c).
 *
 * The probe's own directory, and every directory that holds a file mapped
 * into this test process (the dynamic loader, the libc; with sanitizers
 * their runtimes too), keep read and execute; so does the loader's cache
 * /etc/ld.so.cache, a rule on a regular file. Nothing else: the build tree
 * may sit under a 0700 directory, and a rule on /usr would hide what the
 * tests mean to refuse.
 */
#ifndef FL_LANDLOCK_RULES_H
#define FL_LANDLOCK_RULES_H

#include "test.h"

#include <sys/stat.h>

#define T_MAX_RULES 32

struct t_rules {
    struct fl_landlock_path r[T_MAX_RULES];
    size_t n;
};

static inline void t_rule(struct t_rules *rs, const char *path, unsigned access)
{
    for (size_t i = 0; i < rs->n; i++)
        if (!strcmp(rs->r[i].path, path) && rs->r[i].access == access)
            return;
    if (rs->n == T_MAX_RULES)
        FAIL("too many Landlock rules");
    rs->r[rs->n++] = (struct fl_landlock_path){ t_strdup(path), access };
}

static inline char *t_dirname(const char *path)
{
    char *d = t_strdup(path);
    char *slash = strrchr(d, '/');
    if (slash == d)
        slash[1] = 0;
    else if (slash)
        *slash = 0;
    return d;
}

/* The rules that let the probe (fl_test_probe) start, and nothing more. */
static inline struct t_rules t_probe_rules(void)
{
    struct t_rules rs = { .n = 0 };
    const unsigned rx = FL_LANDLOCK_READ | FL_LANDLOCK_EXEC;
    t_rule(&rs, t_dirname(fl_test_probe), rx);
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        FAIL("/proc/self/maps: %s", strerror(errno));
    char self[4096] = "";
    ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
    self[sn > 0 ? sn : 0] = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path)
            continue;
        path[strcspn(path, "\n")] = 0;
        struct stat st;
        if (!strcmp(path, self) || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        t_rule(&rs, t_dirname(path), rx);
    }
    fclose(f);
    if (access("/etc/ld.so.cache", R_OK) == 0)
        t_rule(&rs, "/etc/ld.so.cache", FL_LANDLOCK_READ);
    return rs;
}

#endif
