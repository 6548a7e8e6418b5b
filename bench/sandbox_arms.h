/* sandbox_arms.h: the arms of the sandbox suite (sandbox.c). Each starts
 * the target once in a sandbox of its case, waits, and checks that it
 * exited 0; they are struct fl_arm (arms.h), so that the suite measures
 * them with fl_arms_measure. */
#ifndef FL_BENCH_SANDBOX_ARMS_H
#define FL_BENCH_SANDBOX_ARMS_H

#include <stddef.h>

#include "arms.h"

/* The Landlock rules: the target's directory, /usr, /etc, /tmp. */
#define FL_SB_NRULES 4

enum fl_sb_case {
    /* A new user, mount, PID and network namespace, uid and gid 0 inside
     * (the caller's outside), every mount private, a fresh /proc. */
    FL_SB_NS,
    /* no_new_privs, a Landlock ruleset of FL_SB_NRULES paths (built per
     * spawn, in the parent), a seccomp filter that denies some system
     * calls (built once). */
    FL_SB_FILTER,
    FL_SB_NCASES
};

struct fl_sb_arm {
    struct fl_arm arm;       /* name, what, run; .forks for the fork arms */
    enum fl_sb_case kase;
    /* An outside program the arm starts (searched in $PATH), or NULL. */
    const char *prog;
    const char *install;     /* how to get prog, for the note when missing */
    int limit;               /* the case's limit: the ratios' reference */
    int forkless;            /* the case's forkless arm */
};

extern const struct fl_sb_arm fl_sb_arms[];
extern const size_t fl_sb_narms;
extern const char *const fl_sb_case_names[FL_SB_NCASES];

/* Prepares what the arms share for target (an absolute path): the id
 * maps, the seccomp filter, the Landlock rules (the target's directory
 * among them), the argvs of the outside programs. Returns 0, or -1 with a
 * message in err. */
int fl_sb_setup(const char *target, char *err, size_t errsz);
void fl_sb_teardown(void);

/* Whether arm a can run here: 1, or 0 with the reason in why (its program
 * missing, no Landlock, a first spawn that failed). */
int fl_sb_usable(const struct fl_sb_arm *a, const struct fl_arm_target *t, char *why,
                 size_t size);

/* What a case's arms do, in a line or two (printed before its table). */
const char *fl_sb_case_what(enum fl_sb_case c);

#endif
