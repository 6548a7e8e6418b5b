/* machine.c: see machine.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "machine.h"

#include <errno.h>
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "helpers.h"

void fl_machine_line(char *buf, size_t size)
{
    struct utsname u;
    if (uname(&u) != 0)
        strcpy(u.sysname, "?"), strcpy(u.release, "?"), strcpy(u.machine, "?");
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    double gib = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE)
                 / (1024.0 * 1024.0 * 1024.0);
#if defined(__GLIBC__)
    char libc[64];
    snprintf(libc, sizeof libc, "glibc %s", gnu_get_libc_version());
#else
    /* musl defines no version macro or call by design. */
    const char *libc = "libc not glibc (musl?)";
#endif
    snprintf(buf, size, "%s %s %s, %ld CPUs, %.1f GiB RAM, %s",
             u.sysname, u.release, u.machine, cpus, gib, libc);
}

/* Reads "<name>: <value> kB" from a /proc file; -1 when absent. */
static long proc_kib(const char *file, const char *name)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return -1;
    char line[256];
    size_t len = strlen(name);
    long kib = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, name, len) == 0 && line[len] == ':') {
            kib = strtol(line + len + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kib;
}

double fl_loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "re");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

long fl_mem_available_mib(void)
{
    return fl_meminfo_mib("MemAvailable");
}

long fl_meminfo_mib(const char *name)
{
    long kib = proc_kib("/proc/meminfo", name);
    return kib < 0 ? -1 : kib / 1024;
}

long fl_read_long_file(const char *path)
{
    long v = -1;
    FILE *f = fopen(path, "re");
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

int fl_reserve_map(struct fl_reserve *r, size_t gib)
{
    r->base = NULL;
    r->bytes = 0;
    if (gib == 0)
        return 0;
    size_t bytes = gib << 30;
    void *p = mmap(NULL, bytes, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return errno;
    r->base = p;
    r->bytes = bytes;
    return 0;
}

void fl_reserve_unmap(struct fl_reserve *r)
{
    if (r->base)
        munmap(r->base, r->bytes);
    r->base = NULL;
    r->bytes = 0;
}

long fl_anon_huge_kib(void)
{
    return proc_kib("/proc/self/smaps_rollup", "AnonHugePages");
}

const char *fl_pages_name(enum fl_pages p)
{
    return p == FL_PAGES_THP ? "thp" : "4k";
}

int fl_heap_alloc(struct fl_heap *h, size_t mib, enum fl_pages pages)
{
    h->base = NULL;
    h->bytes = 0;
    if (mib == 0)
        return 0;
    size_t bytes = mib << 20;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return errno;
    /* Advice that fails (THP compiled out) leaves the default: the row's
     * AnonHuge column says what really happened. */
    (void)madvise(p, bytes, pages == FL_PAGES_THP ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    memset(p, 1, bytes);
    h->base = p;
    h->bytes = bytes;
    return 0;
}

void fl_heap_free(struct fl_heap *h)
{
    if (h->base)
        munmap(h->base, h->bytes);
    h->base = NULL;
    h->bytes = 0;
}

#ifndef FL_TINY_PATH
#define FL_TINY_PATH NULL
#endif
#ifndef FL_TINY_INSTALL_PATH
#define FL_TINY_INSTALL_PATH NULL
#endif

int fl_find_tiny(char *buf, size_t size)
{
    return fl_find_helper("tiny", "FORKLESS_TINY", FL_TINY_PATH,
                          FL_TINY_INSTALL_PATH, buf, size);
}
