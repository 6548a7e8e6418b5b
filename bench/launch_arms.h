/* launch_arms.h: the arms of the launch suite (launch.c) and one round of
 * each. */
#ifndef FL_BENCH_LAUNCH_ARMS_H
#define FL_BENCH_LAUNCH_ARMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "helpers.h"
#include "stats.h"

#define FL_LA_MAX_K 16
#define FL_LA_STAGES 4
/* The most arms the table may hold (a round orders them in an array). */
#define FL_LA_MAX_ARMS 32

enum fl_la_kind {
    FL_LA_POSIX,     /* posix_spawn + waitpid, one at a time */
    FL_LA_BLOCKING,  /* fl_spawn + fl_wait, one at a time */
    FL_LA_LAUNCH,    /* FL_NO_WAIT_EXEC, k in flight */
    FL_LA_THREADS,   /* k threads of fl_spawn + fl_wait (trun.h) */
    FL_LA_PIPE,      /* fl_pipeline_spawn of 4 stages, launched or not */
    FL_LA_RAW,       /* a launch's clone3() and child done raw, k in flight */
    FL_LA_RAW_PIPE,  /* 4 raw children, vforked one by one or launched */
};

struct fl_la_arm {
    const char *name;
    const char *what;        /* for --help */
    enum fl_la_kind kind;
    int k;                   /* LAUNCH, RAW: in flight; THREADS: threads */
    bool pool;               /* LAUNCH: the stack pool on */
    bool launched;           /* PIPE, RAW_PIPE: the stages launched (no CLONE_VFORK) */
    bool unpinned;           /* THREADS: placed by the scheduler, not one per CPU */
    /* Per round (rate arms): spawns per second, ns in the starting call per
     * spawn (0 for THREADS: not measured). PIPE: ns per pipeline start-up,
     * and ns until the whole pipeline has ended and been reaped (.done),
     * `pipelines` a round. */
    uint64_t *rate, *blocked, *lat, *done;   /* RAW_PIPE: as PIPE */
    /* Rate arms, per round: the share of the CPUs' time they stood idle,
     * in hundredths of a percent (cpu.h's watch: cpuidle, or /proc/stat). */
    uint64_t *idle;
    size_t n, nlat;
    struct fl_mmm r, b, i;
    struct fl_summary l, d;
};

extern struct fl_la_arm fl_la_arms[];
extern const size_t fl_la_narms;

/* One round of arm a starting path: `spawns` children (rate arms) or
 * `pipelines` pipelines (PIPE), each checked for exit 0. Records its
 * figures. Returns 0, or 1 with a message printed. */
int fl_la_round(struct fl_la_arm *a, const char *path, unsigned long spawns,
                unsigned long pipelines);

/* The raw_launch arm's round (launch_raw.c): spawns children of path, k
 * in flight, each checked for exit 0; the ns spent in clone3() added to
 * *in_call. Returns 0, or 1 with a message printed. */
int fl_la_raw_run(const char *path, int k, unsigned long spawns, uint64_t *in_call);

/* One pipeline of the raw pipe arms (launch_raw.c): 4 children of path,
 * no pipes, each with a launch's clone3() and default setup, started one
 * after another under CLONE_VFORK, or all launched; the ns until every one
 * has exec'd (*startup) and until all are reaped (*done). Returns 0, or 1
 * with a message printed. */
int fl_la_raw_pipe(const char *path, bool launched, uint64_t *startup, uint64_t *done);

/* Whether arm a times pipelines (PIPE, RAW_PIPE), not a rate. */
static inline bool fl_la_is_pipe(const struct fl_la_arm *a)
{
    return a->kind == FL_LA_PIPE || a->kind == FL_LA_RAW_PIPE;
}

#endif
