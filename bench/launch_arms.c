/* launch_arms.c: the arms of the launch suite and one round of each. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "arms.h"
#include "cpu.h"
#include "forkless.h"
#include "launch_arms.h"
#include "trun.h"

#define SUITE "launch"

extern char **environ;

/* In the static library, hidden from its users: the stack pool on or off,
 * a pipeline's stages launched or started blocking. */
void fl__launch_pool(bool on);
void fl__pipeline_launch(bool on);

#define ARM(n, w, kd, kk, pl, la) \
    { .name = (n), .what = (w), .kind = (kd), .k = (kk), .pool = (pl), .launched = (la) }
struct fl_la_arm fl_la_arms[] = {
    ARM("posix_spawn", "posix_spawn() + waitpid(), one at a time", FL_LA_POSIX, 1, true, false),
    ARM("fl_spawn", "fl_spawn() + fl_wait(), one at a time", FL_LA_BLOCKING, 1, true, false),
    ARM("fl_spawn_t2", "fl_spawn() + fl_wait() from 2 threads, pinned one per CPU\n"
      "                     (as bench threads; with --cpu all, not)", FL_LA_THREADS, 2, true,
      false),
    { .name = "fl_spawn_t2_free", .what = "the same 2 threads left to the scheduler, as an\n"
      "                     application's threads (and a launching thread) are",
      .kind = FL_LA_THREADS, .k = 2, .pool = true, .unpinned = true },
    ARM("launch_k1", "fl_spawn(FL_NO_WAIT_EXEC), 1 in flight, fl_wait() the oldest",
      FL_LA_LAUNCH, 1, true, false),
    ARM("launch_k2", "the same, 2 in flight", FL_LA_LAUNCH, 2, true, false),
    ARM("launch_k4", "the same, 4 in flight", FL_LA_LAUNCH, 4, true, false),
    ARM("launch_k8", "the same, 8 in flight", FL_LA_LAUNCH, 8, true, false),
    ARM("launch_k16", "the same, 16 in flight", FL_LA_LAUNCH, 16, true, false),
    ARM("launch_k16_nopool", "launch_k16 with the library's stack pool off (a stack\n"
      "                     mapped and unmapped per launch)", FL_LA_LAUNCH, 16, false, false),
    ARM("raw_launch_k16", "launch_k16 done raw: clone3() with a launch's flags,\n"
      "                     its child's default setup, no library (the floor\n"
      "                     under the launch arms)", FL_LA_RAW, 16, true, false),
    ARM("pipe_blocking", "fl_pipeline_spawn() of 4 stages, each started blocking:\n"
      "                     time until it returns (all exec'd: start-up),\n"
      "                     and until every stage is reaped (done)",
      FL_LA_PIPE, FL_LA_STAGES, true, false),
    ARM("pipe_launch", "the same, the stages launched (FL_NO_WAIT_EXEC, the default)",
      FL_LA_PIPE, FL_LA_STAGES, true, true),
    ARM("raw_pipe_vfork", "4 children done raw (raw_launch_k16's clone3() and\n"
      "                     child, not yielding), no pipes, no process group,\n"
      "                     each started under CLONE_VFORK in turn",
      FL_LA_RAW_PIPE, FL_LA_STAGES, true, false),
    ARM("raw_pipe_launch", "the same 4 launched, then their exec words waited\n"
      "                     for: with raw_pipe_vfork, the pipe arms' comparison\n"
      "                     done raw", FL_LA_RAW_PIPE, FL_LA_STAGES, true, true),
};
#undef ARM
const size_t fl_la_narms = sizeof fl_la_arms / sizeof fl_la_arms[0];
_Static_assert(sizeof fl_la_arms / sizeof fl_la_arms[0] <= FL_LA_MAX_ARMS,
               "FL_LA_MAX_ARMS is too small for the table");

static int reap_ok(struct fl_proc *p)
{
    int st = -1, r = fl_wait(p, -1, &st);
    fl_close(p);
    char err[96];
    if (r) {
        fprintf(stderr, "forkless bench launch: fl_wait: %s\n", strerror(r));
        return 1;
    }
    if (fl_arm_check_status(st, err, sizeof err) != 0) {
        fprintf(stderr, "forkless bench launch: %s\n", err);
        return 1;
    }
    return 0;
}

static int posix_once(const char *path, char **argv, uint64_t *in_call)
{
    pid_t pid = 0;
    int st = 0;
    uint64_t c0 = fl_bench_now_ns();
    int r = posix_spawn(&pid, path, NULL, NULL, argv, environ);
    *in_call += fl_bench_now_ns() - c0;
    if (r) {
        fprintf(stderr, "forkless bench launch: posix_spawn: %s\n", strerror(r));
        return 1;
    }
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    char err[96];
    if (fl_arm_check_status(st, err, sizeof err) != 0) {
        fprintf(stderr, "forkless bench launch: posix_spawn: %s\n", err);
        return 1;
    }
    return 0;
}

/* One thread: posix_spawn, or fl_spawn keeping a->k in flight (1 and no
 * FL_NO_WAIT_EXEC: blocking), reaping the oldest before the next. */
static int one_thread(struct fl_la_arm *a, const char *path, unsigned long spawns,
                      uint64_t *in_call)
{
    char *argv[] = { (char *)path, NULL };
    struct fl_cmd cmd = { .argv = argv, .path = path,
                          .flags = a->kind == FL_LA_LAUNCH ? FL_NO_WAIT_EXEC : 0 };
    struct fl_proc ring[FL_LA_MAX_K];
    unsigned long k = (unsigned long)a->k;
    for (unsigned long i = 0; i < spawns + k; i++) {
        struct fl_proc *p = &ring[i % k];
        if (a->kind == FL_LA_POSIX) {
            if (i < spawns && posix_once(path, argv, in_call))
                return 1;
            continue;
        }
        if (i >= k && reap_ok(p))
            return 1;
        if (i >= spawns)
            continue;
        struct fl_error e;
        uint64_t c0 = fl_bench_now_ns();
        int r = fl_spawn(&cmd, p, &e);
        *in_call += fl_bench_now_ns() - c0;
        if (r) {
            fprintf(stderr, "forkless bench launch: %s: %s\n", a->name, strerror(r));
            return 1;
        }
    }
    return 0;
}

/* One pipeline of path x 4: the time from before fl_pipeline_spawn() until
 * it returns, when every stage has exec'd (*startup), and until
 * fl_pipeline_wait() has reaped every stage (*done). */
static int pipe_once(struct fl_la_arm *a, const char *path, uint64_t *startup,
                     uint64_t *done)
{
    char *argv[] = { (char *)path, NULL };
    struct fl_cmd st[FL_LA_STAGES];
    struct fl_result res[FL_LA_STAGES];
    struct fl_pipeline pl;
    struct fl_error e;
    for (int k = 0; k < FL_LA_STAGES; k++)
        st[k] = (struct fl_cmd){ .argv = argv, .path = path };
    fl__pipeline_launch(a->launched);
    uint64_t t0 = fl_bench_now_ns();
    int r = fl_pipeline_spawn(st, FL_LA_STAGES, &pl, &e);
    *startup = fl_bench_now_ns() - t0;
    fl__pipeline_launch(true);
    if (r) {
        fprintf(stderr, "forkless bench launch: %s: stage %d: %s\n", a->name, e.stage,
                strerror(r));
        return 1;
    }
    memset(res, 0, sizeof res);
    r = fl_pipeline_wait(&pl, -1, NULL, res);
    *done = fl_bench_now_ns() - t0;
    int bad = r ? 0 : fl_pipefail(res, FL_LA_STAGES);
    for (int k = 0; k < FL_LA_STAGES; k++)
        fl_result_free(&res[k]);
    fl_pipeline_close(&pl);
    if (r || bad >= 0) {
        fprintf(stderr, "forkless bench launch: %s: wait: %s, stage %d failed\n", a->name,
                r ? strerror(r) : "ok", bad + 1);
        return 1;
    }
    return 0;
}

int fl_la_round(struct fl_la_arm *a, const char *path, unsigned long spawns,
                unsigned long pipelines)
{
    if (fl_la_is_pipe(a)) {
        for (unsigned long i = 0; i < pipelines; i++, a->nlat++)
            if (a->kind == FL_LA_PIPE ? pipe_once(a, path, &a->lat[a->nlat], &a->done[a->nlat])
                                      : fl_la_raw_pipe(path, a->launched, &a->lat[a->nlat],
                                                       &a->done[a->nlat]))
                return 1;
        a->n++;
        return 0;
    }
    struct fl_cpu_watch watch;   /* outside the timed span: it reads files */
    fl_cpu_watch_start(&watch);
    uint64_t in_call = 0, t0 = fl_bench_now_ns();
    double rate = 0;
    if (a->kind == FL_LA_THREADS) {
        char *argv[] = { (char *)path, NULL };
        struct fl_arm_target t = { path, argv };
        unsigned long got, each = (spawns + (unsigned long)a->k - 1) / (unsigned long)a->k;
        int spreading = fl_cpu_spreading();
        if (a->unpinned)
            fl_cpu_spread(0);
        int r = fl_trun(SUITE, fl_arm_find("forkless"), &t, (unsigned long)a->k, each, 0,
                        &rate, &got);
        fl_cpu_spread(spreading);
        if (r)
            return 1;
    } else {
        int r;
        if (a->kind == FL_LA_RAW) {
            r = fl_la_raw_run(path, a->k, spawns, &in_call);
        } else {
            fl__launch_pool(a->pool);
            r = one_thread(a, path, spawns, &in_call);
            fl__launch_pool(true);
        }
        if (r)
            return 1;
        uint64_t ns = fl_bench_now_ns() - t0;
        rate = ns ? (double)spawns * 1e9 / (double)ns : 0;
    }
    struct fl_cpu_share share;
    fl_cpu_watch_stop(&watch, &share);
    a->idle[a->n] = (uint64_t)(share.idle_pct * 100.0 + 0.5);
    a->rate[a->n] = (uint64_t)rate;
    a->blocked[a->n++] = in_call / spawns;
    return 0;
}
