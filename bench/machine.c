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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "helpers.h"
#include "suite.h"

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

/* The number after "<name><sep>" on a line of file (as /proc/meminfo's
 * "MemTotal: 123 kB" or memory.stat's "inactive_file 123"); -1 when
 * absent. */
static long long file_field(const char *file, const char *name, char sep)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return -1;
    char line[256];
    size_t len = strlen(name);
    long long v = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, name, len) == 0 && line[len] == sep) {
            v = strtoll(line + len + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

/* Reads "<name>: <value> kB" from a /proc file; -1 when absent. */
static long proc_kib(const char *file, const char *name)
{
    return (long)file_field(file, name, ':');
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

/* The whole number a file starts with, or -1. */
static long long read_number(const char *path)
{
    long long v = -1;
    FILE *f = fopen(path, "re");
    if (f) {
        if (fscanf(f, "%lld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

long fl_read_long_file(const char *path)
{
    return (long)read_number(path);
}

/* ---- the memory a suite may take ---------------------------------------- */

/* A limit at least this large is none (v1 writes "no limit" as about
 * LLONG_MAX). */
#define NO_LIMIT (1ll << 62)

/* A hierarchy's memory files: v2's, or v1's memory controller's. */
struct cg_files {
    int v1;
    const char *limit, *usage;
    const char *inactive;     /* memory.stat's reclaimable page cache, in bytes */
};
static const struct cg_files cg_v2 = { 0, "memory.max", "memory.current", "inactive_file" };
static const struct cg_files cg_v1 = { 1, "memory.limit_in_bytes", "memory.usage_in_bytes",
                                       "total_inactive_file" };

/* This process's cgroup in the hierarchy (/proc/self/cgroup: "0::PATH" on
 * v2, "N:CONTROLLERS:PATH" with memory among them on v1). 0 or -1. */
static int own_cgroup(const struct cg_files *fs, char *path, size_t size)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return -1;
    char line[PATH_MAX + 128];
    int r = -1;
    while (r != 0 && fgets(line, sizeof line, f)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        char *controllers = c1 + 1, *p = c2 + 1;
        *c1 = *c2 = '\0';
        p[strcspn(p, "\n")] = '\0';
        if (fs->v1 ? fl_list_find(controllers, "memory") != NULL : (strcmp(line, "0") == 0 && !*controllers))
            r = snprintf(path, size, "%s", p) < (int)size ? 0 : -1;
    }
    fclose(f);
    return r;
}

/* Where the hierarchy is mounted (/proc/self/mountinfo): the mount point,
 * and the cgroup its root is ("/" unless the mount shows a part of the
 * tree). 0 or -1. */
static int cgroup_mount(const struct cg_files *fs, char *root, char *point)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return -1;
    char line[3 * PATH_MAX], type[64], opts[512];
    int r = -1;
    while (r != 0 && fgets(line, sizeof line, f)) {
        const char *tail = strstr(line, " - ");
        if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2 || !tail ||
            sscanf(tail + 3, "%63s %*s %511s", type, opts) != 2)
            continue;
        if (fs->v1 ? strcmp(type, "cgroup") == 0 && fl_list_find(opts, "memory") != NULL
                   : strcmp(type, "cgroup2") == 0)
            r = 0;
    }
    fclose(f);
    return r;
}

/* A memory file of dir: its whole number of bytes, or -1 ("max", none). */
static long long cg_bytes(const char *dir, const char *name)
{
    char file[PATH_MAX + 64];
    snprintf(file, sizeof file, "%s/%s", dir, name);
    return read_number(file);
}

/* Takes the cgroup dir into r when its room is the least so far. Its use
 * counts its page cache that the kernel reclaims first (inactive_file) as
 * free, as MemAvailable does. */
static void cgroup_level(const struct cg_files *fs, const char *dir, struct fl_mem_room *r)
{
    long long limit = cg_bytes(dir, fs->limit), used = cg_bytes(dir, fs->usage);
    if (limit < 0 || limit >= NO_LIMIT || used < 0)
        return;
    char stat[PATH_MAX + 64];
    snprintf(stat, sizeof stat, "%s/memory.stat", dir);
    long long inactive = file_field(stat, fs->inactive, ' ');
    if (inactive > 0 && inactive < used)
        used -= inactive;
    long room = limit > used ? (long)((limit - used) >> 20) : 0;
    if (r->cg_room_mib >= 0 && room >= r->cg_room_mib)
        return;
    r->cg_room_mib = room;
    r->cg_limit_mib = (long)(limit >> 20);
    r->cg_used_mib = (long)(used >> 20);
    snprintf(r->cg_dir, sizeof r->cg_dir, "%s", dir);
}

/* This process's cgroup in the hierarchy, and every one above it up to
 * the mount, into r: each one's limit holds. */
static void cgroup_room(const struct cg_files *fs, struct fl_mem_room *r)
{
    char path[PATH_MAX], root[PATH_MAX], point[PATH_MAX], dir[PATH_MAX];
    if (own_cgroup(fs, path, sizeof path) != 0 || cgroup_mount(fs, root, point) != 0)
        return;
    size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
    if (strncmp(path, root, rl) != 0 || (path[rl] && path[rl] != '/'))
        return;   /* not below the mount's root: not visible here */
    if (snprintf(dir, sizeof dir, "%s%s", point,
                 strcmp(path + rl, "/") ? path + rl : "") >= (int)sizeof dir)
        return;
    for (size_t top = strlen(point);;) {
        cgroup_level(fs, dir, r);
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < top)
            break;
        *slash = '\0';
    }
}

void fl_mem_room(struct fl_mem_room *r)
{
    *r = (struct fl_mem_room){ .avail_mib = fl_mem_available_mib(), .cg_room_mib = -1 };
    cgroup_room(&cg_v2, r);
    cgroup_room(&cg_v1, r);
    r->mib = r->avail_mib;
    if (r->cg_room_mib >= 0 && (r->mib < 0 || r->cg_room_mib < r->mib))
        r->mib = r->cg_room_mib;
}

int fl_mem_check(const char *suite, const char *option, const unsigned long *mib,
                 size_t n, unsigned long copies, unsigned long margin_mib)
{
    unsigned long most = 0;
    for (size_t i = 0; i < n; i++)
        most = mib[i] > most ? mib[i] : most;
    if (most == 0)
        return 0;
    struct fl_mem_room room;
    fl_mem_room(&room);
    unsigned long need = copies * most + margin_mib;
    if (room.mib < 0 || need <= (unsigned long)room.mib)
        return 0;
    char avail[64] = "unknown", cg[PATH_MAX + 96] = "no cgroup limit";
    if (room.avail_mib >= 0)
        snprintf(avail, sizeof avail, "%ld MiB", room.avail_mib);
    if (room.cg_room_mib >= 0)
        snprintf(cg, sizeof cg, "cgroup %s: limit %ld MiB, %ld MiB in use", room.cg_dir,
                 room.cg_limit_mib, room.cg_used_mib);
    char times[32] = "";
    if (copies > 1)
        snprintf(times, sizeof times, "%lu x ", copies);
    long fits = room.mib > (long)margin_mib ? (room.mib - (long)margin_mib) / (long)copies : 0;
    char hint[96];
    if (fits > 0)
        snprintf(hint, sizeof hint, "choose a %s of at most %ld MiB", option, fits);
    else
        snprintf(hint, sizeof hint, "no %s above 0 fits", option);
    return fl_usage_error(suite, "refused: %s %lu needs %lu MiB (%s%lu MiB + %lu MiB "
                          "margin), but only %ld MiB are free (MemAvailable %s; %s); %s",
                          option, most, need, times, most, margin_mib, room.mib, avail, cg,
                          hint);
}

/* What fl_mem_fit_defaults() left out, for the report's header. */
static char left_out[512];

static void note_left_out(const char *fmt, ...)
{
    size_t used = strlen(left_out);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(left_out + used, sizeof left_out - used, fmt, ap);
    va_end(ap);
}

const char *fl_mem_left_out(void)
{
    return left_out;
}

void fl_mem_left_out_clear(void)
{
    left_out[0] = '\0';
}

void fl_mem_fit_defaults(const char *suite, const char *option, unsigned long *mib, size_t *n,
                         unsigned long copies, unsigned long margin_mib)
{
    struct fl_mem_room room;
    fl_mem_room(&room);
    if (room.mib < 0)
        return;
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++) {
        unsigned long need = copies * mib[i] + margin_mib;
        if (mib[i] == 0 || need <= (unsigned long)room.mib) {
            mib[kept++] = mib[i];
            continue;
        }
        fprintf(stderr, "forkless bench %s: %s %lu left out of the defaults: it needs %lu "
                "MiB (%lu MiB margin included), and %ld MiB are free\n",
                suite, option, mib[i], need, margin_mib, room.mib);
        note_left_out("%s%s %lu (needs %lu MiB, %ld MiB free)", left_out[0] ? "; " : "", option,
                      mib[i], need, room.mib);
    }
    if (kept == 0 && *n > 0) {  /* a default of one size: the suite runs with none */
        mib[kept++] = 0;
        fprintf(stderr, "forkless bench %s: %s 0 in its place\n", suite, option);
        note_left_out(", 0 in its place");
    }
    *n = kept;
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
