/* raw_clone.h: what the arms that do a spawn with raw system calls share
 * (arms.c's clone_vm_clean, launch_raw.c's raw_launch): the clone3() bits
 * an older libc's headers may lack, the library's clone3() entry and the
 * kernel's struct sigaction. */
#ifndef FL_BENCH_RAW_CLONE_H
#define FL_BENCH_RAW_CLONE_H

#include <stddef.h>
#include <stdint.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE 2
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* The library's clone3() entry (spawn_clone.c): the child starts on the
 * given stack and calls fn there. Returns the pid, or -errno. */
long fl__clone3(void *args, size_t size, int (*fn)(void *), void *arg);

/* The kernel's struct sigaction, for rt_sigaction() made raw. */
struct fl_bench_ksigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};

#endif
