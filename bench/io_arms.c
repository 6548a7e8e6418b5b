/* io_arms.c: the arms of the io suite; see io_arms.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "io_arms.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arms.h"
#include "forkless.h"

extern char **environ;

/* ---- capture ------------------------------------------------------------- */

/* A buffer that doubles as it fills, as any capture of unknown size must. */
struct grow {
    char *p;
    size_t len, cap;
};

#define GROW_MIN (64u << 10)

/* Room for at least GROW_MIN more bytes: 0, or -1 (out of memory). */
static int grow_room(struct grow *g)
{
    if (g->cap - g->len >= GROW_MIN)
        return 0;
    size_t cap = g->cap ? g->cap * 2 : GROW_MIN;
    char *p = realloc(g->p, cap);
    if (!p)
        return -1;
    g->p = p;
    g->cap = cap;
    return 0;
}

/* Did the capture get all of the writer's bytes? 0, or -1 with err set. */
static int check_bytes(const struct fl_bio_job *j, unsigned long long got, char *err,
                       size_t errsz)
{
    if (got == j->bytes)
        return 0;
    snprintf(err, errsz, "got %llu bytes, want %zu", got, j->bytes);
    return -1;
}

/* posix_spawn()s argv with its stdout the write end of a new pipe; *fd
 * gets the read end. 0, or -1 with err set. */
static int spawn_to_pipe(char *const *argv, pid_t *pid, int *fd, char *err, size_t errsz)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(err, errsz, "pipe2: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    int e = posix_spawn_file_actions_init(&fa);
    if (!e)
        e = posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    if (!e)
        e = posix_spawn(pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (e) {
        close(p[0]);
        snprintf(err, errsz, "posix_spawn: %s", strerror(e));
        return -1;
    }
    *fd = p[0];
    return 0;
}

/* read() until the end, into a growing buffer (keep) or one 1 MiB buffer
 * used again and again. Returns the bytes read, or -1 with err set. */
static long long read_to_end(int fd, int keep, char *err, size_t errsz)
{
    static char scratch[1u << 20];
    struct grow g = { 0 };
    long long total = 0;
    for (;;) {
        if (keep && grow_room(&g) != 0) {
            snprintf(err, errsz, "out of memory");
            total = -1;
            break;
        }
        char *to = keep ? g.p + g.len : scratch;
        size_t room = keep ? g.cap - g.len : sizeof scratch;
        ssize_t n = read(fd, to, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errsz, "read: %s", strerror(errno));
            total = -1;
            break;
        }
        if (n == 0)
            break;
        g.len += keep ? (size_t)n : 0;
        total += n;
    }
    free(g.p);
    return total;
}

static int capture_read(const struct fl_bio_job *j, int keep, char *err, size_t errsz)
{
    pid_t pid;
    int fd;
    if (spawn_to_pipe(j->wargv, &pid, &fd, err, errsz) != 0)
        return -1;
    long long got = read_to_end(fd, keep, err, errsz);
    close(fd);
    if (fl_arm_reap(pid, got < 0 ? NULL : err, got < 0 ? 0 : errsz) != 0 || got < 0)
        return -1;
    return check_bytes(j, (unsigned long long)got, err, errsz);
}

static int arm_read_loop(const struct fl_bio_job *j, char *err, size_t errsz)
{
    return capture_read(j, 1, err, errsz);
}

static int arm_read_discard(const struct fl_bio_job *j, char *err, size_t errsz)
{
    return capture_read(j, 0, err, errsz);
}

static int arm_popen(const struct fl_bio_job *j, char *err, size_t errsz)
{
    FILE *f = popen(j->wcmd, "r");
    if (!f) {
        snprintf(err, errsz, "popen: %s", strerror(errno));
        return -1;
    }
    struct grow g = { 0 };
    int r = 0;
    for (;;) {
        if (grow_room(&g) != 0) {
            snprintf(err, errsz, "out of memory");
            r = -1;
            break;
        }
        size_t n = fread(g.p + g.len, 1, g.cap - g.len, f);
        g.len += n;
        if (n == 0)
            break;
    }
    if (r == 0 && ferror(f)) {
        snprintf(err, errsz, "fread: %s", strerror(errno));
        r = -1;
    }
    int st = pclose(f);
    free(g.p);
    if (r != 0)
        return r;
    if (st < 0) {
        snprintf(err, errsz, "pclose: %s", strerror(errno));
        return -1;
    }
    if (fl_arm_check_status(st, err, errsz) != 0)
        return -1;
    return check_bytes(j, g.len, err, errsz);
}

/* ---- run ----------------------------------------------------------------- */

static const struct fl_arm *spawn_arm(const struct fl_arm **cache, const char *name)
{
    if (!*cache)
        *cache = fl_arm_find(name);
    return *cache;
}

static int arm_posix_spawn(const struct fl_bio_job *j, char *err, size_t errsz)
{
    static const struct fl_arm *a;
    struct fl_arm_target t = { j->targv[0], j->targv };
    return spawn_arm(&a, "posix_spawn")->run(&t, err, errsz);
}

static int arm_forkless(const struct fl_bio_job *j, char *err, size_t errsz)
{
    static const struct fl_arm *a;
    struct fl_arm_target t = { j->targv[0], j->targv };
    return spawn_arm(&a, "forkless")->run(&t, err, errsz);
}

static int arm_system(const struct fl_bio_job *j, char *err, size_t errsz)
{
    int st = system(j->tcmd);
    if (st < 0) {
        snprintf(err, errsz, "system: %s", strerror(errno));
        return -1;
    }
    return fl_arm_check_status(st, err, errsz);
}

/* ---- pipeline ------------------------------------------------------------ */

/* /bin/sh -c "tiny | tiny | tiny | tiny", posix_spawn()ed and waited for. */
static int arm_sh_pipeline(const struct fl_bio_job *j, char *err, size_t errsz)
{
    char *argv[] = { "sh", "-c", (char *)j->pcmd, NULL };
    pid_t pid;
    int e = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
    if (e) {
        snprintf(err, errsz, "posix_spawn /bin/sh: %s", strerror(e));
        return -1;
    }
    return fl_arm_reap(pid, err, errsz);
}

/* The stages by hand: a pipe between each two, each stage posix_spawn()ed
 * with its ends dup2()ed to 0 and 1 (every pipe end is close-on-exec, so no
 * stage holds another's), the parent's copies closed as it goes, then every
 * stage waited for. */
static int arm_posix_spawn_pipes(const struct fl_bio_job *j, char *err, size_t errsz)
{
    pid_t pids[FL_BIO_STAGES];
    int n = 0, in = -1, r = 0;
    for (; n < FL_BIO_STAGES && r == 0; n++) {
        int p[2] = { -1, -1 };
        if (n + 1 < FL_BIO_STAGES && pipe2(p, O_CLOEXEC) != 0) {
            snprintf(err, errsz, "pipe2: %s", strerror(errno));
            r = -1;
            break;
        }
        posix_spawn_file_actions_t fa;
        int e = posix_spawn_file_actions_init(&fa);
        if (!e && in >= 0)
            e = posix_spawn_file_actions_adddup2(&fa, in, 0);
        if (!e && p[1] >= 0)
            e = posix_spawn_file_actions_adddup2(&fa, p[1], 1);
        if (!e)
            e = posix_spawn(&pids[n], j->targv[0], &fa, NULL, j->targv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (in >= 0)
            close(in);
        if (p[1] >= 0)
            close(p[1]);
        in = p[0];
        if (e) {
            snprintf(err, errsz, "posix_spawn: %s", strerror(e));
            r = -1;
            break;
        }
    }
    if (in >= 0)
        close(in);
    for (int k = 0; k < n; k++)
        if (fl_arm_reap(pids[k], r ? NULL : err, r ? 0 : errsz) != 0)
            r = -1;
    return r;
}

/* ---- forkless ------------------------------------------------------------ */

static int fl_failed(const char *call, int r, const struct fl_error *e, char *err,
                     size_t errsz)
{
    char msg[FL_ERROR_PATH_MAX + FL_ERROR_DETAIL_MAX + 64];
    snprintf(err, errsz, "%s: %s", call, e->err ? fl_error_format(e, msg, sizeof msg)
                                                 : strerror(r));
    return -1;
}

/* fl_run() of the writer, its stdout captured (discard: only counted). */
static int capture_fl_run(const struct fl_bio_job *j, int discard, char *err, size_t errsz)
{
    struct fl_cmd cmd = { .argv = j->wargv, .path = j->wargv[0] };
    struct fl_io io = { .out = { { .capture = true, .discard = discard } } };
    struct fl_result res = { 0 };
    struct fl_error e = { 0 };
    int r = fl_run(&cmd, &io, &res, &e);
    if (r != 0)
        return fl_failed("fl_run", r, &e, err, errsz);
    r = fl_arm_check_status(res.status, err, errsz);
    unsigned long long got = discard ? res.out[0].total : res.out[0].len;
    if (r == 0 && !discard && res.out[0].total != res.out[0].len)
        got = res.out[0].total + 1;   /* something was dropped: fail */
    fl_result_free(&res);
    return r ? r : check_bytes(j, got, err, errsz);
}

static int arm_fl_capture(const struct fl_bio_job *j, char *err, size_t errsz)
{
    return capture_fl_run(j, 0, err, errsz);
}

static int arm_fl_discard(const struct fl_bio_job *j, char *err, size_t errsz)
{
    return capture_fl_run(j, 1, err, errsz);
}

static int arm_fl_run(const struct fl_bio_job *j, char *err, size_t errsz)
{
    struct fl_cmd cmd = { .argv = j->targv, .path = j->targv[0] };
    struct fl_result res = { 0 };
    struct fl_error e = { 0 };
    int r = fl_run(&cmd, NULL, &res, &e);
    if (r != 0)
        return fl_failed("fl_run", r, &e, err, errsz);
    r = fl_arm_check_status(res.status, err, errsz);
    fl_result_free(&res);
    return r;
}

static int arm_fl_pipeline(const struct fl_bio_job *j, char *err, size_t errsz)
{
    struct fl_cmd st[FL_BIO_STAGES];
    struct fl_result res[FL_BIO_STAGES];
    for (int k = 0; k < FL_BIO_STAGES; k++)
        st[k] = (struct fl_cmd){ .argv = j->targv, .path = j->targv[0] };
    memset(res, 0, sizeof res);
    struct fl_error e = { 0 };
    int r = fl_pipeline_run(st, FL_BIO_STAGES, NULL, res, &e);
    if (r != 0)
        return fl_failed("fl_pipeline_run", r, &e, err, errsz);
    int bad = fl_pipefail(res, FL_BIO_STAGES);
    if (bad >= 0) {
        snprintf(err, errsz, "stage %d: ", bad + 1);
        size_t used = strlen(err);
        fl_arm_check_status(res[bad].status, err + used, errsz - used);
    }
    for (int k = 0; k < FL_BIO_STAGES; k++)
        fl_result_free(&res[k]);
    return bad >= 0 ? -1 : 0;
}

/* ---- the table ----------------------------------------------------------- */

const struct fl_bio_arm fl_bio_arms[] = {
    { "read_loop", "posix_spawn() the writer, read() its pipe to the end into a buffer "
      "that doubles (the limit)", FL_BIO_CAPTURE, arm_read_loop, NULL, 1 },
    { "read_discard", "the same read() loop into one 1 MiB buffer, nothing kept",
      FL_BIO_CAPTURE, arm_read_discard, NULL, 0 },
    { "fl_capture", "fl_run() with io.out[0].capture, the library's buffer",
      FL_BIO_CAPTURE, arm_fl_capture, NULL, 0 },
    { "fl_discard", "fl_run() with io.out[0].capture and .discard (only counted)",
      FL_BIO_CAPTURE, arm_fl_discard, NULL, 0 },
    { "popen", "popen(\"writer MIB\", \"r\") (through /bin/sh) + fread() + pclose()",
      FL_BIO_CAPTURE, arm_popen, NULL, 0 },
    { "python", "python3: subprocess.run(capture_output=True), timed inside Python "
      "(peers/io_peer.py)", FL_BIO_CAPTURE, NULL, "io_peer.py", 0 },
    { "rust", "Rust: Command::output(), timed inside the program (peers/io_peer.rs, "
      "built with rustc)", FL_BIO_CAPTURE, NULL, "io_peer_rust", 0 },
    { "posix_spawn", "posix_spawn() + waitpid() of tiny", FL_BIO_RUN, arm_posix_spawn,
      NULL, 1 },
    { "system", "system(\"tiny\"): /bin/sh -c, which execs tiny", FL_BIO_RUN, arm_system,
      NULL, 0 },
    { "forkless", "fl_spawn() defaults + fl_wait() of tiny", FL_BIO_RUN, arm_forkless,
      NULL, 0 },
    { "fl_run", "fl_run() of tiny, no io", FL_BIO_RUN, arm_fl_run, NULL, 0 },
    { "posix_spawn_pipes", "4 posix_spawn()s of tiny, pipes wired by hand, 4 waitpid()s",
      FL_BIO_PIPELINE, arm_posix_spawn_pipes, NULL, 1 },
    { "sh_pipeline", "posix_spawn() of /bin/sh -c \"tiny | tiny | tiny | tiny\" + waitpid()",
      FL_BIO_PIPELINE, arm_sh_pipeline, NULL, 0 },
    { "fl_pipeline", "fl_pipeline_run() of 4 tinys, no io", FL_BIO_PIPELINE,
      arm_fl_pipeline, NULL, 0 },
};
const size_t fl_bio_narms = sizeof fl_bio_arms / sizeof fl_bio_arms[0];
