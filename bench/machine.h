/* machine.h: what the bench needs to know about the machine and itself:
 * memory, huge pages, a resident heap, the tiny target. */
#ifndef FL_BENCH_MACHINE_H
#define FL_BENCH_MACHINE_H

#include <limits.h>
#include <stddef.h>

/* One line describing the machine: "Linux 6.1.0 x86_64, 2 CPUs, glibc 2.36". */
void fl_machine_line(char *buf, size_t size);

/* The 1-minute load average from /proc/loadavg, or -1. */
double fl_loadavg(void);

/* MemAvailable from /proc/meminfo in MiB, or -1 when it cannot be read. */
long fl_mem_available_mib(void);

/* Any "<name>: <n> kB" line of /proc/meminfo (MemTotal, CommitLimit,
 * Committed_AS, ...) in MiB, or -1. */
long fl_meminfo_mib(const char *name);

/* The memory the bench may take: the least of MemAvailable and the room
 * of this process's cgroup and of each one above it, on v2 and on v1's
 * memory hierarchy (memory.max less memory.current, memory.limit_in_bytes
 * less memory.usage_in_bytes; the page cache the kernel reclaims first,
 * inactive_file, counts as free, as it does in MemAvailable). Inside a
 * container the host's MemAvailable is not what the kernel's OOM killer
 * goes by. Every figure is in MiB, -1 when unknown; cg_* describe the
 * cgroup with the least room, cg_room_mib -1 when none has a limit. */
struct fl_mem_room {
    long mib;
    long avail_mib;
    long cg_room_mib, cg_limit_mib, cg_used_mib;
    char cg_dir[PATH_MAX];
};
void fl_mem_room(struct fl_mem_room *r);

/* For sizes that the user did not give (a suite's default --heap list):
 * those above 0 that fl_mem_check() would refuse are left out of mib[]
 * (*n shrinks, but a list left empty gets 0), each said on stderr, so that
 * a plain `forkless bench` runs what fits on a small machine. */
void fl_mem_fit_defaults(const char *suite, const char *option, unsigned long *mib, size_t *n,
                         unsigned long copies, unsigned long margin_mib);
/* What fl_mem_fit_defaults() has left out since fl_mem_left_out_clear()
 * (each suite's start: `bench all` runs them in one process), as one line
 * ("--heap 4096 (needs 4608 MiB, 3900 MiB free)"), or "" when nothing. */
const char *fl_mem_left_out(void);
void fl_mem_left_out_clear(void);

/* The one memory check of every suite, before it allocates: copies x the
 * largest of the n values (MiB) of option, held at once, and margin_mib for
 * the rest (page tables, the children, a runtime), must fit in
 * fl_mem_room(). Returns 0, or 2 with "refused: ..." on stderr naming the
 * option, the value and the limits found (a usage error: the run would be
 * killed, not measured). A room that cannot be read refuses nothing. */
int fl_mem_check(const char *suite, const char *option, const unsigned long *mib,
                 size_t n, unsigned long copies, unsigned long margin_mib);

/* A whole number from a one-line file such as /proc/sys/vm/overcommit_memory,
 * or -1. */
long fl_read_long_file(const char *path);

/* An address-space reservation: gib GiB of PROT_NONE, MAP_NORESERVE,
 * never touched (no memory, no commit charge, only a VMA). gib 0 gives none.
 * Returns 0 or an errno value (of mmap). */
struct fl_reserve {
    void *base;
    size_t bytes;
};
int fl_reserve_map(struct fl_reserve *r, size_t gib);
void fl_reserve_unmap(struct fl_reserve *r);

/* AnonHugePages of this process (/proc/self/smaps_rollup) in KiB, or -1. */
long fl_anon_huge_kib(void);

/* Page kinds for a resident heap. */
enum fl_pages { FL_PAGES_4K, FL_PAGES_THP };
const char *fl_pages_name(enum fl_pages p);

/* A resident anonymous heap of mib MiB: mmap, madvise(NOHUGEPAGE for 4k,
 * HUGEPAGE for thp), then every byte written. mib 0 gives an empty heap.
 * Returns 0 or an errno value (of mmap). */
struct fl_heap {
    void *base;
    size_t bytes;
};
int fl_heap_alloc(struct fl_heap *h, size_t mib, enum fl_pages pages);
void fl_heap_free(struct fl_heap *h);

/* Finds the bench's static `tiny` target: $FORKLESS_TINY, next to the
 * running executable, <exe dir>/../bench/tiny, the build tree, the install
 * tree. Writes the path to buf and returns 0, or returns ENOENT. */
int fl_find_tiny(char *buf, size_t size);

#endif
