/* capnames.c: the capability table, from the CAP_* macros of the kernel
 * headers this is built with: an older header simply knows fewer names
 * (their numbers still work). */
#include "capnames.h"

#include <linux/capability.h>
#include <stddef.h>
#include <stdlib.h>
#include <strings.h>

#define CAP(name, value) { "cap_" name, value }

static const struct {
    const char *name;
    int value;
} caps[] = {
    CAP("chown", CAP_CHOWN),
    CAP("dac_override", CAP_DAC_OVERRIDE),
    CAP("dac_read_search", CAP_DAC_READ_SEARCH),
    CAP("fowner", CAP_FOWNER),
    CAP("fsetid", CAP_FSETID),
    CAP("kill", CAP_KILL),
    CAP("setgid", CAP_SETGID),
    CAP("setuid", CAP_SETUID),
    CAP("setpcap", CAP_SETPCAP),
    CAP("linux_immutable", CAP_LINUX_IMMUTABLE),
    CAP("net_bind_service", CAP_NET_BIND_SERVICE),
    CAP("net_broadcast", CAP_NET_BROADCAST),
    CAP("net_admin", CAP_NET_ADMIN),
    CAP("net_raw", CAP_NET_RAW),
    CAP("ipc_lock", CAP_IPC_LOCK),
    CAP("ipc_owner", CAP_IPC_OWNER),
    CAP("sys_module", CAP_SYS_MODULE),
    CAP("sys_rawio", CAP_SYS_RAWIO),
    CAP("sys_chroot", CAP_SYS_CHROOT),
    CAP("sys_ptrace", CAP_SYS_PTRACE),
    CAP("sys_pacct", CAP_SYS_PACCT),
    CAP("sys_admin", CAP_SYS_ADMIN),
    CAP("sys_boot", CAP_SYS_BOOT),
    CAP("sys_nice", CAP_SYS_NICE),
    CAP("sys_resource", CAP_SYS_RESOURCE),
    CAP("sys_time", CAP_SYS_TIME),
    CAP("sys_tty_config", CAP_SYS_TTY_CONFIG),
    CAP("mknod", CAP_MKNOD),
    CAP("lease", CAP_LEASE),
    CAP("audit_write", CAP_AUDIT_WRITE),
    CAP("audit_control", CAP_AUDIT_CONTROL),
#ifdef CAP_SETFCAP
    CAP("setfcap", CAP_SETFCAP),
#endif
#ifdef CAP_MAC_OVERRIDE
    CAP("mac_override", CAP_MAC_OVERRIDE),
#endif
#ifdef CAP_MAC_ADMIN
    CAP("mac_admin", CAP_MAC_ADMIN),
#endif
#ifdef CAP_SYSLOG
    CAP("syslog", CAP_SYSLOG),
#endif
#ifdef CAP_WAKE_ALARM
    CAP("wake_alarm", CAP_WAKE_ALARM),
#endif
#ifdef CAP_BLOCK_SUSPEND
    CAP("block_suspend", CAP_BLOCK_SUSPEND),
#endif
#ifdef CAP_AUDIT_READ
    CAP("audit_read", CAP_AUDIT_READ),
#endif
#ifdef CAP_PERFMON
    CAP("perfmon", CAP_PERFMON),
#endif
#ifdef CAP_BPF
    CAP("bpf", CAP_BPF),
#endif
#ifdef CAP_CHECKPOINT_RESTORE
    CAP("checkpoint_restore", CAP_CHECKPOINT_RESTORE),
#endif
};

#define NCAPS (sizeof caps / sizeof caps[0])

int cap_by_name(const char *name)
{
    if (name[0] >= '0' && name[0] <= '9') {
        char *end;
        long n = strtol(name, &end, 10);
        return *end == '\0' && n >= 0 && n < 64 ? (int)n : -1;
    }
    const char *bare = strncasecmp(name, "cap_", 4) == 0 ? name + 4 : name;
    for (size_t i = 0; i < NCAPS; i++)
        if (strcasecmp(bare, caps[i].name + 4) == 0)
            return caps[i].value;
    return -1;
}

const char *cap_name(int cap)
{
    for (size_t i = 0; i < NCAPS; i++)
        if (caps[i].value == cap)
            return caps[i].name;
    return NULL;
}
