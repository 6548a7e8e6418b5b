/* contain_opts.h: the containment and placement options of `forkless run`
 * (--unshare, --map-root-user, --chroot, --caps, --seccomp-deny,
 * --landlock-ro, --cpus, --nice, ...), turned into the library's struct
 * fl_contain and struct fl_sched. options.c hands every option of the
 * range below to contain_option(); run.c asks for the messages. */
#ifndef FL_TOOLS_CONTAIN_OPTS_H
#define FL_TOOLS_CONTAIN_OPTS_H

#include <getopt.h>
#include <linux/filter.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "forkless.h"

enum {
    OPT_CONTAIN_FIRST = 512,
    OPT_UNSHARE = OPT_CONTAIN_FIRST, OPT_MAP_ROOT_USER, OPT_MAP_CURRENT_USER,
    OPT_HOSTNAME, OPT_MOUNT_PROC, OPT_CHROOT, OPT_NO_NEW_PRIVS, OPT_CAPS,
    OPT_AMBIENT_CAPS, OPT_SECCOMP_DENY, OPT_SECCOMP_ERRNO, OPT_LANDLOCK_RO,
    OPT_LANDLOCK_RX, OPT_LANDLOCK_RW,
    OPT_PLACE_FIRST,
    OPT_CPUS = OPT_PLACE_FIRST, OPT_NICE, OPT_IONICE, OPT_OOM_SCORE_ADJ, OPT_BEST_EFFORT,
    OPT_CONTAIN_END,
};

/* Their entries of the getopt_long() table. */
#define CONTAIN_LONG_OPTIONS \
    { "unshare", required_argument, NULL, OPT_UNSHARE }, \
    { "map-root-user", no_argument, NULL, OPT_MAP_ROOT_USER }, \
    { "map-current-user", no_argument, NULL, OPT_MAP_CURRENT_USER }, \
    { "hostname", required_argument, NULL, OPT_HOSTNAME }, \
    { "mount-proc", no_argument, NULL, OPT_MOUNT_PROC }, \
    { "chroot", required_argument, NULL, OPT_CHROOT }, \
    { "no-new-privs", no_argument, NULL, OPT_NO_NEW_PRIVS }, \
    { "caps", required_argument, NULL, OPT_CAPS }, \
    { "ambient-caps", required_argument, NULL, OPT_AMBIENT_CAPS }, \
    { "seccomp-deny", required_argument, NULL, OPT_SECCOMP_DENY }, \
    { "seccomp-errno", required_argument, NULL, OPT_SECCOMP_ERRNO }, \
    { "landlock-ro", required_argument, NULL, OPT_LANDLOCK_RO }, \
    { "landlock-rx", required_argument, NULL, OPT_LANDLOCK_RX }, \
    { "landlock-rw", required_argument, NULL, OPT_LANDLOCK_RW }, \
    { "cpus", required_argument, NULL, OPT_CPUS }, \
    { "nice", required_argument, NULL, OPT_NICE }, \
    { "ionice", required_argument, NULL, OPT_IONICE }, \
    { "oom-score-adj", required_argument, NULL, OPT_OOM_SCORE_ADJ }, \
    { "best-effort", no_argument, NULL, OPT_BEST_EFFORT }

struct contain_options {
    struct fl_contain contain;
    struct fl_sched sched;
    struct fl_landlock_path *landlock;  /* malloc'ed; contain.landlock */
    size_t landlock_room;
    int *syscalls;                      /* malloc'ed; --seccomp-deny */
    size_t nsyscalls, syscalls_room;
    int seccomp_errno;                  /* 0 until --seccomp-errno */
    struct sock_fprog seccomp;          /* fl_seccomp_deny()'s */
    bool caps_given;                    /* --caps, even "" */
    unsigned unshare_given;             /* the namespaces --unshare named */
    bool map_given;
    bool best_effort;
    cpu_set_t *cpus;                    /* CPU_ALLOC'ed; sched.cpus */
    char *chroot;                       /* malloc'ed, absolute; contain.chroot */
    /* The texts given, for messages. */
    const char *cpus_arg, *nice_arg, *ionice_arg, *oom_arg, *ambient_arg;
};

/* Applies option opt (OPT_CONTAIN_FIRST <= opt < OPT_CONTAIN_END) with
 * its argument. Returns 0, or -1 after printing why. */
int contain_option(struct contain_options *c, int opt, const char *arg);

/* The placement options (OPT_PLACE_FIRST <= opt < OPT_CONTAIN_END), the
 * same way (place_opts.c). */
int place_option(struct contain_options *c, int opt, const char *arg);

/* The settings that depend on several options, once all are read: what
 * one option implies for another, the seccomp filter. Points cmd->contain
 * and cmd->sched at c's structs when any option was given. Returns 0, or
 * -1 after printing why. */
int contain_finish(struct contain_options *c, struct fl_cmd *cmd);

/* Writes the message for a failed spawn whose step is a containment or
 * placement one (or a clone refused while namespaces were asked for),
 * naming the value given: "nice -5: Permission denied". Returns false,
 * writing nothing, for any other failure (contain_report.c). */
bool contain_explain(const struct contain_options *c, const struct fl_error *e,
                     const char *message, char *buf, size_t size);

/* After a spawn: one line on stderr for each --best-effort setting that
 * did not apply, and for the Landlock rights the kernel cannot enforce. */
void contain_report(const struct contain_options *c, const struct fl_proc *proc);

void contain_free(struct contain_options *c);

#endif
