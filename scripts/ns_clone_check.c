/* ns_clone_check: which namespace flags the kernel accepts at clone time
 * with a shared address space: clone3(CLONE_VM|CLONE_VFORK|ns) and
 * clone3(CLONE_VM|ns), each of the 8 flags alone and all together, as the
 * current user, with and without CLONE_NEWUSER. The child only _exits
 * (raw syscall). docs/containment.md says what it printed.
 *
 *     cc -O1 -o /tmp/nscheck scripts/ns_clone_check.c && /tmp/nscheck
 *     setpriv --reuid 65534 --regid 65534 --clear-groups /tmp/nscheck
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x80
#endif
static char stack[1 << 16] __attribute__((aligned(16)));
static int try(uint64_t flags)
{
    struct clone_args a = { .flags = flags, .exit_signal = SIGCHLD,
                            .stack = (uint64_t)(uintptr_t)stack, .stack_size = sizeof stack };
    long pid = syscall(SYS_clone3, &a, sizeof a);
    if (pid == 0)
        syscall(SYS_exit, 0);
    if (pid < 0)
        return errno;
    int st;
    waitpid((pid_t)pid, &st, __WALL);
    return 0;
}
int main(void)
{
    static const struct { const char *n; uint64_t f; } ns[] = {
        { "NEWUSER", CLONE_NEWUSER }, { "NEWNS", CLONE_NEWNS }, { "NEWPID", CLONE_NEWPID },
        { "NEWNET", CLONE_NEWNET }, { "NEWIPC", CLONE_NEWIPC }, { "NEWUTS", CLONE_NEWUTS },
        { "NEWCGROUP", CLONE_NEWCGROUP }, { "NEWTIME", CLONE_NEWTIME } };
    uint64_t all = 0;
    for (int i = 0; i < 8; i++) all |= ns[i].f;
    printf("uid %d\n", (int)getuid());
    for (int v = 0; v < 2; v++) {
        uint64_t base = v ? CLONE_VM : CLONE_VM | CLONE_VFORK;
        const char *bn = v ? "CLONE_VM" : "CLONE_VM|CLONE_VFORK";
        for (int u = 0; u < 2; u++) {
            uint64_t user = u ? CLONE_NEWUSER : 0;
            for (int i = 0; i < 8; i++) {
                int r = try(base | user | ns[i].f);
                printf("%s%s | %s: %s\n", bn, u ? "|NEWUSER" : "", ns[i].n, r ? strerror(r) : "ok");
            }
            int r = try(base | user | all);
            printf("%s%s | all 8: %s\n", bn, u ? "|NEWUSER" : "", r ? strerror(r) : "ok");
        }
    }
}
