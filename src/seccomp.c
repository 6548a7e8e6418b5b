/* seccomp.c: a filter that denies a list of system calls, for callers
 * who need no libseccomp, and the names of the system calls. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <string.h>

#include "internal.h"

struct fl__syscall_name {
    const char *name;
    int nr;
};
#include "syscall_names.h"

/* The architecture this build's system calls go through. */
#if defined(__x86_64__) && defined(__LP64__)
#define FL_AUDIT_ARCH AUDIT_ARCH_X86_64
/* x32 calls carry the x86_64 architecture with this bit in the number. */
#define X32_BIT 0x40000000u
#elif defined(__i386__)
#define FL_AUDIT_ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define FL_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__arm__) && defined(__ARMEL__)
#define FL_AUDIT_ARCH AUDIT_ARCH_ARM
#elif defined(__riscv) && __riscv_xlen == 64
#define FL_AUDIT_ARCH AUDIT_ARCH_RISCV64
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
#define FL_AUDIT_ARCH AUDIT_ARCH_PPC64LE
#elif defined(__s390x__)
#define FL_AUDIT_ARCH AUDIT_ARCH_S390X
#endif

#define MAX_DENIED 1000

static int cmp_name(const void *key, const void *entry)
{
    return strcmp(key, ((const struct fl__syscall_name *)entry)->name);
}

int fl_syscall_number(const char *name)
{
    if (!name)
        return -1;
    const struct fl__syscall_name *s =
        bsearch(name, fl__syscall_names, sizeof fl__syscall_names / sizeof *fl__syscall_names,
                sizeof *fl__syscall_names, cmp_name);
    return s ? s->nr : -1;
}

#define STMT(code, k) ((struct sock_filter)BPF_STMT((code), (k)))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP((code), (k), (jt), (jf)))

/* The program: the architecture or death; on x86_64 an x32 number or
 * death; then two instructions per number (equal: the errno; else the
 * next test), so that no jump is longer than one, whatever the count;
 * then allow. */
int fl_seccomp_deny(const int *syscalls, size_t n, int errno_value, struct sock_fprog *prog)
{
    if (!prog)
        return EINVAL;
    prog->len = 0;
    prog->filter = NULL;
#ifndef FL_AUDIT_ARCH
    (void)syscalls;
    (void)n;
    (void)errno_value;
    return ENOTSUP;
#else
    if ((n && !syscalls) || n > MAX_DENIED || errno_value < 1 || errno_value > 4095)
        return EINVAL;
    /* A process that cannot exit: the child whose exec failed would spin
     * in its exit, and the caller wait for it for ever. */
    for (size_t i = 0; i < n; i++)
        if (syscalls[i] < 0 || syscalls[i] == SYS_exit_group || syscalls[i] == SYS_exit)
            return EINVAL;
    struct sock_filter *f = malloc((9 + 2 * n) * sizeof *f);
    if (!f)
        return ENOMEM;
    size_t k = 0;
    f[k++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, FL_AUDIT_ARCH, 1, 0);
    f[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    f[k++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#ifdef X32_BIT
    /* syscall(-1) is no x32 call: the kernel answers it with ENOSYS. */
    f[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 2, 0);
    f[k++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 0, 1);
    f[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
#endif
    for (size_t i = 0; i < n; i++) {
        f[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)syscalls[i], 0, 1);
        f[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)errno_value & SECCOMP_RET_DATA));
    }
    f[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    prog->len = (unsigned short)k;
    prog->filter = f;
    return 0;
#endif
}

void fl_seccomp_free(struct sock_fprog *prog)
{
    if (!prog)
        return;
    free(prog->filter);
    prog->filter = NULL;
    prog->len = 0;
}
