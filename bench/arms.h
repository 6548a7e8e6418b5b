/* arms.h: the ways of starting a program that the suites race. Each arm
 * starts one child, waits for it, and checks that it exited with 0. */
#ifndef FL_BENCH_ARMS_H
#define FL_BENCH_ARMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "stats.h"

/* What every arm starts: an absolute path, its argv, and environ. */
struct fl_arm_target {
    const char *path;
    char *const *argv;
};

/* Starts the target once and reaps it. Returns 0 when the child exited 0;
 * otherwise non-zero with a message in err. */
typedef int (*fl_arm_fn)(const struct fl_arm_target *t, char *err, size_t errsz);

struct fl_arm {
    const char *name;     /* as printed: "fork_exec", "forkless", ... */
    const char *what;     /* one line for --help */
    fl_arm_fn run;
    int in_default;       /* part of the default set of arms */
    /* The arm calls fork(). A fork write-protects the parent's whole memory
     * for copy-on-write, so whatever spawns next pays page faults for each
     * page it writes: suites time forking arms in their own group, apart
     * from the others (see fl_arms_measure). */
    int forks;
    /* The arm whose work this one does too, when that is not clone_vm:
     * heap prints the ratio to it as well. */
    const char *limit;
};

extern const struct fl_arm fl_arms[];
extern const size_t fl_narms;

/* The arm named name, or NULL. */
const struct fl_arm *fl_arm_find(const char *name);

/* The reference arm that ratios are taken against. */
#define FL_ARM_REFERENCE "clone_vm"

/* Fills out[] (room for fl_narms) from suite's --arms, a comma list of
 * names, or with the default arms when list is NULL; *n gets the count,
 * and *ref_index the index of the arm named ref (SIZE_MAX when it is not
 * among them). A name may appear only once. Returns 0, or 2 after a usage
 * error (see fl_usage_error()). */
int fl_arms_select(const char *suite, const char *list, const struct fl_arm **out, size_t *n,
                   const char *ref, size_t *ref_index);

/* Waits for pid (retrying on EINTR). Returns its wait status, or -1 with a
 * message in err. Also used by the call suite. */
int fl_arm_wait(pid_t pid, char *err, size_t errsz);

/* Checks a wait status for a clean exit 0. Returns 0, or -1 with a message
 * in err. */
int fl_arm_check_status(int st, char *err, size_t errsz);

/* fl_arm_wait, then checks for a clean exit 0. Returns 0, or -1 with a
 * message in err. Also used by the loop suite. */
int fl_arm_reap(pid_t pid, char *err, size_t errsz);

/* The top of this thread's stack for a clone(CLONE_VM|CLONE_VFORK) child
 * (64 KiB), mapped at its first use and used again and again: the parent
 * is suspended until the child execs, so it is never used twice at once.
 * Returns NULL with a message in err when it cannot be mapped. */
char *fl_arm_clone_stack(char *err, size_t errsz);

/* fl_spawn + fl_wait of cmd. Returns the wait status, or -1 with a message
 * in err. Also used by the loop and call suites. */
struct fl_cmd;
int fl_arm_spawn_wait(const struct fl_cmd *cmd, char *err, size_t errsz);

/* fl_arm_spawn_wait, then checks for a clean exit 0. Returns 0, or -1 with
 * a message in err. */
int fl_arm_spawn_ok(const struct fl_cmd *cmd, char *err, size_t errsz);

/* One timed spawn+wait of arm, taken again at most `retakes` times when
 * something else ran meanwhile (fl_sample_upto in stats.h): 0 with *ns its
 * time, or non-zero with a message in err. */
int fl_arm_sample(const struct fl_arm *arm, const struct fl_arm_target *t, uint64_t *ns,
                  struct fl_retakes *rt, int retakes, char *err, size_t errsz);

/* One arm's samples at one condition (a heap size, ...): their summary, how
 * many were asked for (after the budget) and how often they were taken
 * again. */
struct fl_arm_cell {
    struct fl_summary s;
    size_t want;
    struct fl_retakes rt;
};

/* A budgeted arm still takes at least this many samples. */
#define FL_ARM_MIN_SAMPLES 20

/* How fl_arms_measure samples: "forkless bench SUITE" in messages, the
 * target, rounds, the budget per arm in seconds (0: no limit), and how
 * often a disturbed sample is taken again (FL_RETAKES, or 0: never). */
struct fl_arms_run {
    const char *suite;
    const struct fl_arm_target *t;
    size_t rounds;
    unsigned long budget_s;
    int retakes;
};

/* Measures narms arms at the current condition: each arm warms up (3
 * spawns, not recorded) and is given fewer than `rounds` samples (at least
 * FL_ARM_MIN_SAMPLES, evenly spread) when its spawns would take longer
 * than the budget; then come the rounds, in which every arm runs once, in
 * a fresh random order. The arms that fork run after the others,
 * interleaved among themselves: each fork write-protects the parent's
 * memory, and interleaved with a fork every other arm paid copy-on-write
 * faults on what it wrote next (on a 2-core VM: forkless went from 1.11x
 * to 1.15-1.21x clone_vm at a 0 MiB heap, clone_vm itself 1.4-2.4x slower
 * at 1 GiB). samples has room for narms * rounds; res[a] (zeroed by the
 * caller) gets arm a's summary. Returns 0, or 1 with
 * "forkless bench SUITE: ARM: ..." on stderr. */
int fl_arms_measure(const struct fl_arms_run *run, const struct fl_arm *const *arms,
                    size_t narms, uint64_t *samples, struct fl_arm_cell *res);

/* Prints the arm names and descriptions, one per line, indented. */
void fl_arms_list(FILE *f);

#endif
