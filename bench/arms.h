/* arms.h: the ways of starting a program that the suites race. Each arm
 * starts one child, waits for it, and checks that it exited with 0. */
#ifndef FL_BENCH_ARMS_H
#define FL_BENCH_ARMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

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
     * from the others (see heap.c). */
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

/* Fills out[] (room for fl_narms) from a comma list of names, or with the
 * default arms when list is NULL; *n gets the count. A name may appear only
 * once. Returns 0, or -1 with a message in err. */
int fl_arms_select(const char *list, const struct fl_arm **out, size_t *n,
                   char *err, size_t errsz);

/* Waits for pid (retrying on EINTR). Returns its wait status, or -1 with a
 * message in err. Also used by the call suite. */
int fl_arm_wait(pid_t pid, char *err, size_t errsz);

/* Checks a wait status for a clean exit 0. Returns 0, or -1 with a message
 * in err. */
int fl_arm_check_status(int st, char *err, size_t errsz);

/* fl_arm_wait, then checks for a clean exit 0. Returns 0, or -1 with a
 * message in err. Also used by the loop suite. */
int fl_arm_reap(pid_t pid, char *err, size_t errsz);

/* fl_spawn + fl_wait of cmd. Returns the wait status, or -1 with a message
 * in err. Also used by the loop and call suites. */
struct fl_cmd;
int fl_arm_spawn_wait(const struct fl_cmd *cmd, char *err, size_t errsz);

/* One timed spawn+wait of arm, taken again when something else ran
 * meanwhile (fl_sample in stats.h): 0 with *ns its time, or non-zero with a
 * message in err. */
struct fl_retakes;
int fl_arm_sample(const struct fl_arm *arm, const struct fl_arm_target *t, uint64_t *ns,
                  struct fl_retakes *rt, char *err, size_t errsz);

/* Prints the arm names and descriptions, one per line, indented. */
void fl_arms_list(FILE *f);

#endif
