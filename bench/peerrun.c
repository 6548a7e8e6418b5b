/* peerrun.c: see peerrun.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "peerrun.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forkless.h"
#include "suite.h"

/* fl_run() takes its deadline in milliseconds, as an int. */
#define MAX_DEADLINE_S ((unsigned long)INT_MAX / 1000)

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

unsigned long fl_peer_deadline_s(unsigned long runs, unsigned long run_s,
                                 unsigned long once_s)
{
    unsigned long s;
    const char *v = getenv("FORKLESS_PEER_TIMEOUT");
    if (v && fl_parse_ulong(v, 1, MAX_DEADLINE_S, &s) == 0)
        return s;
    s = FL_PEER_START_S + once_s + runs * run_s;
    return s < MAX_DEADLINE_S ? s : MAX_DEADLINE_S;
}

/* Why fl_run() failed, in failed. */
static void run_failed(int r, const struct fl_error *e, char *failed, size_t fsize)
{
    char msg[FL_ERROR_PATH_MAX + FL_ERROR_DETAIL_MAX + 64];
    if (e->err)
        snprintf(failed, fsize, "%s", fl_error_format(e, msg, sizeof msg));
    else if (r == ENOMEM)
        snprintf(failed, fsize, "out of memory reading its output");
    else
        snprintf(failed, fsize, "fl_run: %s", strerror(r));
}

int fl_peer_collect(char *const *argv, unsigned long want, unsigned long timeout_s,
                    uint64_t *samples, size_t *got, char *version, size_t vsize,
                    char *failed, size_t fsize)
{
    /* At the deadline the peer is hung: SIGKILL, as it has nothing to
     * save, to its group, so that a target it hangs on goes too. In a
     * group of its own it misses the terminal's Ctrl-C, so it dies with
     * the bench instead (pdeathsig). */
    const struct fl_stop_policy stop = { .signal = SIGKILL, .scope = FL_STOP_GROUP };
    struct fl_cmd cmd = { .argv = argv, .flags = FL_NEW_PGROUP, .pdeathsig = SIGKILL };
    struct fl_io io = { .out = { { .capture = true } }, .stop = &stop,
                        .timeout_ms = (int)(timeout_s * 1000) };
    struct fl_result res;
    struct fl_error e = { 0 };
    char none[] = "";
    int r = fl_run(&cmd, &io, &res, &e);
    int st = res.status, bad = 1;
    if (r != 0)
        run_failed(r, &e, failed, fsize);
    else if (res.timed_out)
        snprintf(failed, fsize, "timed out after %lu s", timeout_s);
    else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
        snprintf(failed, fsize, "exited with status %d", WEXITSTATUS(st));
    else if (!WIFEXITED(st))
        snprintf(failed, fsize, "killed by signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    else
        bad = parse_samples(res.out[0].data ? res.out[0].data : none, want, samples, got,
                            version, vsize, failed, fsize);
    fl_result_free(&res);
    return bad;
}
