/* helpers.c: see helpers.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "helpers.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int try_exe(char *buf, size_t size, const char *path)
{
    char real[PATH_MAX];
    if (!path || !*path || access(path, X_OK) != 0 || !realpath(path, real))
        return 0;
    return (size_t)snprintf(buf, size, "%s", real) < size;
}

int fl_find_helper(const char *name, const char *envvar, const char *build_path,
                   const char *install_path, char *buf, size_t size)
{
    if (envvar && try_exe(buf, size, getenv(envvar)))
        return 0;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            static const char *const dirs[] = { "", "/../bench", "/../libexec/forkless" };
            for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
                char cand[PATH_MAX + 64];
                snprintf(cand, sizeof cand, "%s%s/%s", exe, dirs[i], name);
                if (try_exe(buf, size, cand))
                    return 0;
            }
        }
    }
    if (try_exe(buf, size, build_path) || try_exe(buf, size, install_path))
        return 0;
    return ENOENT;
}

int fl_find_bench_prog(const char *name, const char *envvar, const char *build_path,
                       char *buf, size_t size)
{
#ifdef FL_HELPER_INSTALL_DIR
    char inst[PATH_MAX];
    snprintf(inst, sizeof inst, "%s/%s", FL_HELPER_INSTALL_DIR, name);
#else
    const char *inst = NULL;
#endif
    return fl_find_helper(name, envvar, build_path, inst, buf, size);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void fl_mmm_of(uint64_t *v, size_t n, struct fl_mmm *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return;
    qsort(v, n, sizeof *v, cmp_u64);
    out->min = (double)v[0];
    out->max = (double)v[n - 1];
    out->median = (n % 2) ? (double)v[n / 2]
                          : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
}

void fl_spread_of(const double *v, size_t n, struct fl_spread *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    out->mean = sum / (double)n;
    out->stddev = out->sem = NAN;
    if (n < 2)
        return;
    double m2 = 0;
    for (size_t i = 0; i < n; i++)
        m2 += (v[i] - out->mean) * (v[i] - out->mean);
    out->stddev = sqrt(m2 / (double)(n - 1));
    out->sem = out->stddev / sqrt((double)n);
}

static uint64_t tv_ns(struct timeval t)
{
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_usec * 1000u;
}

void fl_usage_now(struct fl_usage *u)
{
    struct rusage s, c;
    memset(u, 0, sizeof *u);
    if (getrusage(RUSAGE_SELF, &s) == 0) {
        u->self_cpu_ns = tv_ns(s.ru_utime) + tv_ns(s.ru_stime);
        u->self_minflt = s.ru_minflt;
    }
    if (getrusage(RUSAGE_CHILDREN, &c) == 0) {
        u->child_cpu_ns = tv_ns(c.ru_utime) + tv_ns(c.ru_stime);
        u->child_minflt = c.ru_minflt;
    }
}

const char *fl_list_find(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
            return p;
    return NULL;
}
