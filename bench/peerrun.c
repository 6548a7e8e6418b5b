/* peerrun.c: see peerrun.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "peerrun.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forkless.h"

#ifndef FL_PEERS_SRC_DIR
#define FL_PEERS_SRC_DIR ""
#endif
#ifndef FL_PEERS_BIN_DIR
#define FL_PEERS_BIN_DIR ""
#endif

static const char *dir_of(const char *env, const char *def)
{
    const char *v = getenv(env);
    return v && *v ? v : def;
}

const char *fl_peers_src_dir(void)
{
    return dir_of("FORKLESS_PEERS_SRC", FL_PEERS_SRC_DIR);
}

const char *fl_peers_bin_dir(void)
{
    return dir_of("FORKLESS_PEERS_BIN", FL_PEERS_BIN_DIR);
}

int fl_is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int fl_peer_find_prog(const char *name, char *buf, size_t size)
{
    char *const argv[] = { (char *)name, NULL };
    struct fl_cmd cmd = { .argv = argv };
    return fl_resolve(&cmd, buf, size, NULL);
}

int fl_peer_script(const char *runtime, const char *name, char *prog, char *script,
                   char *skip, size_t skipsz)
{
    snprintf(script, PATH_MAX, "%s/%s", fl_peers_src_dir(), name);
    if (fl_peer_find_prog(runtime, prog, PATH_MAX) != 0)
        snprintf(skip, skipsz, "%s not found", runtime);
    else if (!fl_is_file(script))
        snprintf(skip, skipsz, "%.*s not found (set FORKLESS_PEERS_SRC)",
                 (int)(skipsz > 40 ? skipsz - 40 : 0), script);
    else
        return 1;
    return 0;
}

int fl_peer_binary(const char *name, int built, const char *why, char *prog,
                   char *skip, size_t skipsz)
{
    snprintf(prog, PATH_MAX, "%s/%s", fl_peers_bin_dir(), name);
    if (fl_is_file(prog) && access(prog, X_OK) == 0)
        return 1;
    if (built)
        snprintf(skip, skipsz, "%.*s not built", (int)(skipsz > 16 ? skipsz - 16 : 0), prog);
    else
        snprintf(skip, skipsz, "%s", why);
    return 0;
}

/* All of fd, NUL-terminated, in a malloc'ed buffer, or NULL (out of memory). */
static char *read_all(int fd)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    for (;;) {
        if (len + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + len, cap - len - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    buf[len] = '\0';
    return buf;
}

/* Takes the samples out of a peer's output. Returns 0 or 1 (failed set). */
static int parse_samples(char *buf, unsigned long want, uint64_t *samples, size_t *got,
                         char *version, size_t vsize, char *failed, size_t fsize)
{
    unsigned long taken = 0;
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (strncmp(line, "# version ", 10) == 0) {
            snprintf(version, vsize, "%s", line + 10);
            continue;
        }
        if (!*line || line[0] == '#')
            continue;
        char *end;
        double us = strtod(line, &end);
        if (end == line || *end || !(us >= 0) || taken == want) {
            snprintf(failed, fsize, "unexpected output \"%.60s\"", line);
            return 1;
        }
        samples[(*got)++] = (uint64_t)(us * 1e3 + 0.5);
        taken++;
    }
    if (taken != want) {
        snprintf(failed, fsize, "printed %lu samples, expected %lu", taken, want);
        return 1;
    }
    return 0;
}

int fl_peer_collect(char *const *argv, unsigned long want, uint64_t *samples, size_t *got,
                    char *version, size_t vsize, char *failed, size_t fsize)
{
    struct fl_cmd cmd = { .argv = argv, .stdio = { [1] = { .kind = FL_PIPE } } };
    struct fl_proc proc;
    struct fl_error e;
    if (fl_spawn(&cmd, &proc, &e) != 0) {
        char msg[FL_ERROR_PATH_MAX + FL_ERROR_DETAIL_MAX + 64];
        snprintf(failed, fsize, "%s", fl_error_format(&e, msg, sizeof msg));
        return 1;
    }
    char *buf = read_all(proc.stdio[1]);
    int st = 0;
    int wr = fl_wait(&proc, -1, &st);
    fl_close(&proc);
    int r = 1;
    if (!buf)
        snprintf(failed, fsize, "out of memory reading its output");
    else if (wr)
        snprintf(failed, fsize, "fl_wait: %s", strerror(wr));
    else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
        snprintf(failed, fsize, "exited with status %d", WEXITSTATUS(st));
    else if (!WIFEXITED(st))
        snprintf(failed, fsize, "killed by signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    else
        r = parse_samples(buf, want, samples, got, version, vsize, failed, fsize);
    free(buf);
    return r;
}
