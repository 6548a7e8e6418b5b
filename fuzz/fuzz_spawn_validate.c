/*
 * fuzz_spawn_validate: fl_spawn() and fl_resolve() on a struct fl_cmd built
 * from the input, exercising only validation and the parent's preparation
 * (checks, environment, PATH search, sizes, fd plan). No process is ever
 * started: every command asks for the fork backend with FL_NO_FORK, which
 * fl_spawn() refuses with ENOTSUP after preparing everything. A return of 0
 * (a started child) is a failure of the harness's premise and aborts.
 *
 * Checked for every input: the result is 0-free and a known errno; *proc
 * is empty; the error record is terminated and names err; no fd leaks (the
 * lowest free fd is the same after the calls as before); LeakSanitizer checks memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forkless.h"

static int lowest_free_fd;

static int lowest_free(void)
{
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        close(fd);
    return fd;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Some parent fds for the maps: 3 and 4 open (4 FD_CLOEXEC). */
    int a = open("/dev/null", O_RDONLY);
    int b = open("/dev/null", O_RDONLY | O_CLOEXEC);
    (void)a;
    (void)b;
    return 0;
}

struct input {
    const uint8_t *p;
    size_t n;
};

static unsigned byte(struct input *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

enum { NSTR = 16 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Per input: between inputs libFuzzer may start the sanitizers'
     * symbolizer, whose pipes stay open (NEW_FUNC lines). */
    lowest_free_fd = lowest_free();
    if (size < 48 || size > 8192)
        return 0;
    struct input in = { data, 48 };
    /* The strings: everything after the 48 header bytes, cut on NULs. */
    size_t slen = size - 48;
    char *sbuf = malloc(slen + 1);
    memcpy(sbuf, data + 48, slen);
    sbuf[slen] = 0;
    char *strs[NSTR] = { 0 };
    int nstr = 0;
    for (size_t i = 0, start = 0; i <= slen && nstr < NSTR; i++)
        if (sbuf[i] == 0) {
            strs[nstr++] = sbuf + start;
            start = i + 1;
        }
#define STR() (strs[byte(&in) % NSTR]) /* NULL when past the last */

    /* A long string now and then: around MAX_ARG_STRLEN. */
    char *big = NULL;
    unsigned bigsel = byte(&in);
    if (bigsel >= 250) {
        size_t len = 131072 - 2 + (bigsel - 250);
        big = malloc(len + 1);
        memset(big, 'B', len);
        big[len] = 0;
    }

    char *argv[6] = { 0 };
    unsigned nargv = byte(&in) % 6;
    for (unsigned i = 0; i < nargv && i < 5; i++)
        argv[i] = STR();
    if (big && nargv > 1)
        argv[1] = big;
    char *env[5] = { 0 };
    const char *env_set[4] = { 0 }, *env_unset[4] = { 0 };
    unsigned ne = byte(&in);
    for (unsigned i = 0; i < (ne & 3); i++)
        env[i] = STR();
    for (unsigned i = 0; i < ((ne >> 2) & 3); i++)
        env_set[i] = STR();
    for (unsigned i = 0; i < ((ne >> 4) & 3); i++)
        env_unset[i] = STR();
    if (big && (ne & 0x40))
        env_set[0] = big;

    struct fl_fd_map maps[4];
    unsigned nfds = byte(&in) % 5;
    for (unsigned i = 0; i < 4; i++) {
        maps[i].child_fd = (int8_t)byte(&in);
        maps[i].parent_fd = (int8_t)byte(&in);
    }
    struct fl_rlimit rl[2];
    unsigned nrl = byte(&in) % 3;
    for (unsigned i = 0; i < 2; i++) {
        rl[i].resource = (int8_t)byte(&in);
        unsigned s = byte(&in), h = byte(&in);
        rl[i].soft = s == 255 ? RLIM_INFINITY : s;
        rl[i].hard = h == 255 ? RLIM_INFINITY : h;
    }
    gid_t groups[3] = { byte(&in), byte(&in), 65534 };
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, 1 + byte(&in) % 64);

    struct fl_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    unsigned shape = byte(&in);
    cmd.argv = (shape & 1) ? NULL : argv;
    cmd.path = (shape & 2) ? STR() : NULL;
    cmd.env = (shape & 4) ? env : NULL;
    cmd.env_set = (shape & 8) ? env_set : NULL;
    cmd.env_unset = (shape & 16) ? env_unset : NULL;
    cmd.cwd = (shape & 32) ? STR() : NULL;
    cmd.fds = (shape & 64) ? NULL : maps;
    cmd.nfds = nfds;
    cmd.rlimits = (shape & 128) ? NULL : rl;
    cmd.nrlimits = nrl;
    for (int i = 0; i < 3; i++) {
        unsigned k = byte(&in);
        cmd.stdio[i].kind = (enum fl_stdio_kind)(k % 8);
        cmd.stdio[i].fd = (int8_t)byte(&in);
        cmd.stdio[i].path = (k & 8) ? STR() : NULL;
        cmd.stdio[i].flags = (k & 16) ? O_RDWR | O_CREAT : 0;
    }
    unsigned f0 = byte(&in), f1 = byte(&in);
    cmd.flags = (f0 | f1 << 8 | ((f1 & 0x80) ? 0x10000u : 0)) | FL_NO_FORK;
    cmd.sigmask = (f0 & 1) ? &mask : NULL;
    cmd.sigdefault = (f0 & 2) ? &mask : NULL;
    cmd.pgid = (int8_t)byte(&in);
    cmd.umask = byte(&in) * 4;
    cmd.uid = byte(&in);
    cmd.gid = byte(&in);
    unsigned g = byte(&in);
    cmd.groups = (g & 4) ? NULL : groups;
    cmd.ngroups = (g & 128) ? 100000 : g % 4;
    cmd.pdeathsig = (int8_t)byte(&in);
    unsigned misc = byte(&in);
    cmd.cgroup = (misc & 1) ? STR() : NULL;
    if (misc == 0xff)
        cmd.reserved_[misc % 8] = &cmd;
    /* Never start a process: the fork backend, forbidden. */
    cmd.backend = FL_BACKEND_FORK;

    struct fl_proc proc;
    struct fl_error err;
    memset(&err, 0x55, sizeof err);
    int r = fl_spawn(&cmd, &proc, &err);
    if (r == 0) {
        /* Should be impossible; do not leave the child behind. */
        fl_kill(&proc, SIGKILL);
        fl_wait(&proc, -1, NULL);
        fl_close(&proc);
        fprintf(stderr, "fl_spawn started a process despite FL_NO_FORK\n");
        abort();
    }
    if (r < 0 || r > 4095)
        abort();
    if (err.err != r || !memchr(err.path, 0, sizeof err.path) ||
        !memchr(err.detail, 0, sizeof err.detail))
        abort();
    if (proc.pid != 0 || proc.pidfd != -1 || proc.stdio[0] != -1 ||
        proc.stdio[1] != -1 || proc.stdio[2] != -1)
        abort();
    char msg[256];
    fl_error_format(&err, msg, sizeof msg);
    if (!memchr(msg, 0, sizeof msg))
        abort();

    /* fl_resolve() on the same command, into a small and a big buffer. */
    char small[8], path[4096];
    memset(&err, 0x55, sizeof err);
    r = fl_resolve(&cmd, (misc & 2) ? small : path,
                   (misc & 2) ? sizeof small : sizeof path, &err);
    if (r < 0 || r > 4095)
        abort();

    if (lowest_free() != lowest_free_fd) {
        char link[64], target[512] = "?";
        snprintf(link, sizeof link, "/proc/self/fd/%d", lowest_free_fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        target[n > 0 ? n : 0] = 0;
        fprintf(stderr, "fd leak: lowest free fd %d, was %d (fd %d is %s)\n",
                lowest_free(), lowest_free_fd, lowest_free_fd, target);
        abort();
    }
    free(big);
    free(sbuf);
    return 0;
}
