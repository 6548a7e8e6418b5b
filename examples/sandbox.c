/*
 * sandbox.c: run a program in a sandbox, without root and without a
 * wrapper program (unshare, bwrap): namespaces, Landlock and seccomp, all
 * set up in the one child that forkless starts.
 *
 * Two runs of a small shell script that prints what it sees:
 *   1. namespaces: in a user namespace with our uid mapped to 0 it is
 *      "root", with no power outside; in a PID namespace with a fresh /proc
 *      it is pid 1 and sees only its own processes; in a network namespace
 *      it has only a loopback; in a UTS namespace, its own host name;
 *   2. the same, and Landlock: it may read and run the system's files,
 *      write in one work directory, and nothing else ("Permission
 *      denied"); and seccomp: mkdir() fails with EPERM ("Operation not
 *      permitted") even where Landlock allows it.
 *
 * Where the kernel or a container forbids user namespaces or Landlock, it
 * says so and exits 77 (a skipped test).
 *
 * Build: cc sandbox.c -lforkless        Run: ./sandbox
 */
#include <forkless.h>

#include <errno.h>
#include <linux/filter.h>   /* struct sock_fprog, the seccomp filter */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SKIP 77

/* $1: the work directory, $2: a file outside it. */
static char script1[] =
    "echo \"uid $(id -u), pid $$, host name $(uname -n), pid 1 is $(cat /proc/1/comm)\"\n"
    "echo \"network: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ')\"\n"
    "echo \"environment: $(env | tr '\\n' ' ')\"\n";
static char script2[] =
    "echo data > \"$1/out.txt\" && echo 'write in the work directory: ok'\n"
    "cat \"$2\"\n"        /* outside every Landlock rule: EACCES */
    "mkdir \"$1/sub\"\n"  /* the seccomp filter: EPERM */
    /* The fresh /proc is out of reach too: it is mounted after the parent
     * built the ruleset, and Landlock ignores a rule on the directory a
     * file system is mounted on (a rule on the caller's /proc would reach
     * only the caller's /proc, without FL_MOUNT_PROC); only a rule on a
     * directory above it, such as "/", would reach it. */
    "ls /proc\n"
    "exit 0\n";

/* Runs the script in the box; prints its output. 0, SKIP, or 1. */
static int run(struct fl_contain *box, char *script, const char *work, const char *secret)
{
    struct fl_cmd cmd = {
        .argv = (char *const[]){ "sh", "-c", script, "sh", (char *)work, (char *)secret, NULL },
        /* Not our environment: only what is set here. */
        .flags = FL_ENV_CLEAR,
        .env_set = (const char *const[]){ "PATH=/usr/bin:/bin", NULL },
        .stdio = { [0] = { .kind = FL_NULL }, [2] = { .kind = FL_TO_STDOUT } },
        .contain = box,
    };
    /* Capture what it prints (stdout and stderr, in order), 10 s at most. */
    struct fl_io io = { .out = { [0] = { .capture = true, .limit = 65536 } },
                        .timeout_ms = 10000 };
    struct fl_result res = { 0 };   /* zero: safe to free whatever fails */
    struct fl_error err;
    char msg[1200];

    int rc = fl_run(&cmd, &io, &res, &err);
    if (rc == 0) {
        printf("%sexit status %d\n", res.out[0].data ? res.out[0].data : "",
               fl_result_shell_status(&res));
        fl_result_free(&res);
        return 0;
    }
    /* A failure after the spawn (the exchange or the wait) leaves *error
     * clear and the result filled: free it either way. */
    fl_result_free(&res);
    if (err.step == FL_STEP_NONE) {
        printf("not run: %s\n", strerror(rc));
        return 1;
    }
    fl_error_format(&err, msg, sizeof msg);
    if (err.step == FL_STEP_CLONE || err.step == FL_STEP_ID_MAP ||
        err.step == FL_STEP_MOUNT || err.step == FL_STEP_HOSTNAME) {
        /* Namespaces refused: a sysctl (user.max_user_namespaces,
         * kernel.unprivileged_userns_clone), an AppArmor policy, or a
         * container's seccomp profile. Not this program's fault. */
        printf("skipped: user namespaces are not available here: %s\n", msg);
        return SKIP;
    }
    printf("not run: %s\n", msg);
    return 1;
}

int main(void)
{
    /* A scratch tree: base/work is the child's to write, base/secret.txt
     * is outside every rule. */
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char base[512], work[600], secret[600], path[700];
    snprintf(base, sizeof base, "%s/fl-sandbox-XXXXXX", tmp);
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(work, sizeof work, "%s/work", base);
    snprintf(secret, sizeof secret, "%s/secret.txt", base);
    FILE *f = fopen(secret, "w");
    if (mkdir(work, 0700) != 0 || !f || fputs("a secret\n", f) < 0 || fclose(f) != 0) {
        perror(base);
        return 1;
    }

    struct fl_contain box = {
        .unshare = FL_NS_USER | FL_NS_MOUNT | FL_NS_PID | FL_NS_NET | FL_NS_UTS,
        .map = FL_MAP_ROOT,              /* our uid is 0 inside, unprivileged too */
        .hostname = "sandbox",
        .flags = FL_MOUNT_PROC,          /* a /proc of the new PID namespace */
    };
    printf("1. user, mount, pid, net and uts namespaces\n");
    int rc = run(&box, script1, work, secret);

    /* Landlock needs Linux 5.13 and the "landlock" LSM enabled. */
    int abi = fl_landlock_abi();
    if (rc == 0 && abi == 0) {
        printf("skipped: this kernel has no Landlock (or it is disabled)\n");
        rc = SKIP;
    }
    /* The Landlock rules: what the child keeps, beneath paths that exist
     * here (a missing one would fail the spawn, at step landlock). */
    struct fl_landlock_path rules[16];
    size_t n = 0;
    const char *system_dirs[] = { "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc" };
    for (size_t i = 0; i < sizeof system_dirs / sizeof *system_dirs; i++)
        if (access(system_dirs[i], F_OK) == 0)
            rules[n++] = (struct fl_landlock_path){ system_dirs[i],
                                                    FL_LANDLOCK_READ | FL_LANDLOCK_EXEC };
    rules[n++] = (struct fl_landlock_path){ work, FL_LANDLOCK_READ | FL_LANDLOCK_WRITE };

    /* A seccomp filter that makes mkdir() and mkdirat() fail with EPERM.
     * fl_syscall_number() is -1 for a call this architecture lacks (aarch64
     * has no mkdir, only mkdirat). */
    int calls[2], ncalls = 0;
    if (fl_syscall_number("mkdir") >= 0)
        calls[ncalls++] = fl_syscall_number("mkdir");
    calls[ncalls++] = fl_syscall_number("mkdirat");
    struct sock_fprog filter;
    if (rc == 0 && fl_seccomp_deny(calls, (size_t)ncalls, EPERM, &filter) != 0) {
        printf("skipped: no seccomp filter for this architecture\n");
        rc = SKIP;
    }

    if (rc == 0) {
        /* no_new_privs: no setuid program can undo the sandbox. Landlock as
         * far as this kernel goes: a right an older one lacks stays allowed
         * rather than fail the spawn. */
        box.flags |= FL_NO_NEW_PRIVS | FL_LANDLOCK_BEST_EFFORT;
        box.landlock = rules;
        box.nlandlock = n;
        box.seccomp = &filter;           /* must live until the spawn returns */
        printf("2. the same, with Landlock (ABI %d) and a seccomp filter\n", abi);
        rc = run(&box, script2, work, secret);
        fl_seccomp_free(&filter);
    }

    snprintf(path, sizeof path, "%s/out.txt", work);
    unlink(path);
    snprintf(path, sizeof path, "%s/sub", work);
    rmdir(path);
    rmdir(work);
    unlink(secret);
    rmdir(base);
    return rc;
}
