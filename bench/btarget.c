/* btarget.c: see btarget.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "btarget.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "machine.h"
#include "suite.h"

int fl_bench_target(const char *suite, const char *t, char *buf, size_t size,
                    int *is_tiny)
{
    *is_tiny = strcmp(t, "tiny") == 0;
    if (*is_tiny) {
        if (fl_find_tiny(buf, size) != 0) {
            fprintf(stderr, "forkless bench %s: the \"tiny\" target was not found "
                    "next to the forkless binary, in ../bench, in the build tree "
                    "or in the install tree; build the `tiny` target or set "
                    "FORKLESS_TINY=PATH\n", suite);
            return 1;
        }
        return 0;
    }
    char cand[PATH_MAX];
    if (!*t) {
        cand[0] = '\0';
    } else if (strchr(t, '/')) {
        snprintf(cand, sizeof cand, "%s", t);
    } else {
        const char *path = getenv("PATH");
        if (!path)
            path = "/usr/bin:/bin";
        cand[0] = '\0';
        while (*path) {
            size_t len = strcspn(path, ":");
            if (len > 0 && path[0] == '/') {
                snprintf(cand, sizeof cand, "%.*s/%s", (int)len, path, t);
                if (access(cand, X_OK) == 0)
                    break;
            }
            cand[0] = '\0';
            path += len + (path[len] == ':');
        }
    }
    char real[PATH_MAX];
    struct stat st;
    int e = 0;
    if (!cand[0])
        e = ENOENT;
    else if (!realpath(cand, real) || stat(real, &st) != 0)
        e = errno;
    else if (!S_ISREG(st.st_mode))
        e = S_ISDIR(st.st_mode) ? EISDIR : EACCES;
    else if (access(real, X_OK) != 0)
        e = errno;
    if (e) {
        fl_usage_error(suite, "--target \"%s\": not an executable file (%s)", t,
                       strerror(e));
        return 2;
    }
    /* The name found, made absolute but not resolved: a program that
     * reads its argv[0] (one binary for many commands, through symlinks)
     * must see its own name. */
    char cwd[PATH_MAX];
    if (cand[0] == '/' || !getcwd(cwd, sizeof cwd) ||
        snprintf(buf, size, "%s/%s", cwd, cand) >= (int)size)
        snprintf(buf, size, "%s", cand[0] == '/' ? cand : real);
    return 0;
}
