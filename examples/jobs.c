/*
 * jobs.c: a job runner. N commands at once from one thread, each with a
 * deadline, waited for with poll() on their pidfds: no threads, no SIGCHLD
 * handler, no busy loop.
 *
 * Each job is launched with FL_NO_WAIT_EXEC: fl_spawn() returns as soon as
 * the child exists, and the child does its setup and exec on another core
 * while this thread launches the next. fl_launch_finish() later says
 * whether the exec happened (a bad cwd, say, shows up there). A pidfd
 * becomes readable when its process ends; a job past its deadline is
 * stopped with fl_stop(): SIGTERM to its process group, SIGKILL after a
 * grace period.
 *
 * Build: cc jobs.c -lforkless        Run: ./jobs
 */
#include <forkless.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct job {
    const char *name;
    struct fl_cmd cmd;
    long long deadline;         /* CLOCK_MONOTONIC, in ms */
    struct fl_proc proc;
    int deadline_ms;            /* from the launch */
    int running;
    char summary[600];          /* how it ended, printed at the end */
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The stop at a deadline: SIGTERM to the job's process group (FL_NEW_PGROUP
 * below), so that its children go too, then SIGKILL 300 ms later. */
static const struct fl_stop_policy stop = { .signal = SIGTERM, .grace_ms = 300,
                                            .scope = FL_STOP_GROUP };

/* Records how a reaped job ended. */
static void ended(struct job *j, const struct fl_result *r)
{
    /* fl_stop() sets stop_signal even where the job had ended just before
     * the signal reached it: its own status then says how it ended. */
    if (r->stop_signal && (r->signal == r->stop_signal || (r->killed && r->signal == SIGKILL)))
        snprintf(j->summary, sizeof j->summary, "stopped at its deadline: %s%s",
                 strsignal(r->stop_signal), r->killed ? ", then SIGKILL" : "");
    else if (r->signal)
        snprintf(j->summary, sizeof j->summary, "killed by %s", strsignal(r->signal));
    else
        snprintf(j->summary, sizeof j->summary, "exit %d%s", r->exit_code,
                 r->stop_signal ? " (as its deadline came)" : "");
    printf("  %-8s ended after %lld ms: %s\n", j->name, r->elapsed_ns / 1000000, j->summary);
    j->running = 0;
}

/* A wait that failed (ECHILD: another part of the program reaped it). */
static void failed(struct job *j, int rc)
{
    snprintf(j->summary, sizeof j->summary, "lost: %s", strerror(rc));
    j->running = 0;
}

#define ARGV(...) (char *const[]){ __VA_ARGS__, NULL }
/* A job: its name, its deadline in ms, and its struct fl_cmd fields. */
#define JOB(name_, ms, ...) { .name = name_, .deadline_ms = ms, .cmd = { __VA_ARGS__ } }
#define NJOBS (sizeof jobs / sizeof jobs[0])

int main(void)
{
    sigset_t term;   /* for the job that ignores SIGTERM */
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);

    struct job jobs[] = {
        JOB("quick", 10000, .argv = ARGV("sleep", "0.2")),
        JOB("fails", 10000, .argv = ARGV("sh", "-c", "exit 2")),
        JOB("hangs", 1000, .argv = ARGV("sleep", "30")),
        /* Starts with SIGTERM ignored (as `trap '' TERM` would): only the
         * SIGKILL after the grace period ends it. */
        JOB("stubborn", 1000, .argv = ARGV("sleep", "30"), .sigignore = &term),
        /* The chdir fails in the child: the launch reports it later. */
        JOB("badcwd", 10000, .argv = ARGV("true"), .cwd = "/no/such/dir"),
        /* The PATH search is done before the launch: fl_spawn() fails. */
        JOB("missing", 10000, .argv = ARGV("no-such-program")),
    };
    struct fl_error err;
    char msg[512];

    /* 1. Launch every job without waiting for any exec. */
    for (size_t i = 0; i < NJOBS; i++) {
        struct job *j = &jobs[i];
        j->cmd.flags |= FL_NO_WAIT_EXEC | FL_NEW_PGROUP;
        j->cmd.stdio[0].kind = FL_NULL;             /* no job reads our stdin */
        int rc = fl_spawn(&j->cmd, &j->proc, &err);
        if (rc != 0) {
            snprintf(j->summary, sizeof j->summary, "not started: %s",
                     fl_error_format(&err, msg, sizeof msg));
            continue;
        }
        j->deadline = now_ms() + j->deadline_ms;
        j->running = 1;
    }

    /* 2. Now see which launches reached their exec. A child that failed
     * before it is reaped here, with the step that failed. */
    for (size_t i = 0; i < NJOBS; i++) {
        struct job *j = &jobs[i];
        if (j->running && fl_launch_finish(&j->proc, &err) != 0) {
            snprintf(j->summary, sizeof j->summary, "not started: %s",
                     fl_error_format(&err, msg, sizeof msg));
            j->running = 0;
        }
        if (j->running && j->proc.pidfd < 0) {
            printf("no pidfds here (Linux 5.3 or later needed)\n");
            /* Leave nothing behind: kill and reap every job launched so
             * far (a wait also settles a launch not yet finished), then
             * free the handles. */
            for (size_t k = 0; k < NJOBS; k++) {
                if (jobs[k].running) {
                    fl_kill(&jobs[k].proc, SIGKILL);
                    fl_wait(&jobs[k].proc, -1, NULL);
                }
                fl_close(&jobs[k].proc);
            }
            return 77;
        }
    }

    /* 3. Sleep in poll() until a job ends or the nearest deadline. */
    for (;;) {
        struct pollfd fds[NJOBS];
        size_t who[NJOBS], n = 0;
        long long now = now_ms(), wake = -1;
        for (size_t i = 0; i < NJOBS; i++) {
            if (!jobs[i].running)
                continue;
            fds[n] = (struct pollfd){ .fd = jobs[i].proc.pidfd, .events = POLLIN };
            who[n++] = i;
            if (wake < 0 || jobs[i].deadline < wake)
                wake = jobs[i].deadline;
        }
        if (n == 0)
            break;
        int timeout = wake <= now ? 0 : (int)(wake - now);
        if (poll(fds, n, timeout) < 0) {
            if (errno == EINTR)
                continue;   /* a signal handler ran: look again */
            perror("poll");
            return 1;
        }

        now = now_ms();
        for (size_t k = 0; k < n; k++) {
            struct job *j = &jobs[who[k]];
            struct fl_result r;
            if (fds[k].revents & POLLIN) {
                /* It has ended: reap it without waiting (timeout 0). */
                int rc = fl_wait_result(&j->proc, 0, NULL, &r);
                if (rc == 0)
                    ended(j, &r);
                else if (rc != ETIMEDOUT)
                    failed(j, rc);
            } else if (now >= j->deadline) {
                /* Overran: fl_stop() blocks this thread for up to the grace
                 * period; a runner with many jobs would send the signal with
                 * fl_killpg() and keep polling instead. */
                int rc = fl_stop(&j->proc, &stop, &r);
                if (rc == 0)
                    ended(j, &r);
                else
                    failed(j, rc);
            }
        }
    }

    printf("summary:\n");
    for (size_t i = 0; i < NJOBS; i++) {
        printf("  %-8s %s\n", jobs[i].name, jobs[i].summary);
        fl_close(&jobs[i].proc);   /* frees the handle: its pidfd, its launch record */
    }
    return 0;
}
