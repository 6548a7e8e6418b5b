/* suite.h: the bench suites and the option helpers they share. */
#ifndef FL_BENCH_SUITE_H
#define FL_BENCH_SUITE_H

#include <stddef.h>
#include <stdio.h>

/* A suite: argv[0] is its name, the rest its options. Returns the exit
 * status (0, 1 for a failed run, 2 for a usage error). */
struct fl_suite {
    const char *name;
    const char *what;
    int (*main)(int argc, char **argv);
    void (*usage)(FILE *f);
    /* The suite needs every CPU (T threads, a producer and its worker):
     * it is never pinned to one (see cpu.h). */
    int all_cpus;
};

extern const struct fl_suite fl_suites[];
extern const size_t fl_nsuites;

/* The heap suite (heap.c). */
int fl_bench_heap(int argc, char **argv);
void fl_bench_heap_usage(FILE *f);

/* The threads suite (threads.c). */
int fl_bench_threads(int argc, char **argv);
void fl_bench_threads_usage(FILE *f);

/* The peers suite (peers.c). */
int fl_bench_peers(int argc, char **argv);
/* The forkless peer of the peers suite (peers.c): argv[0] is
 * "--peer-child", then HEAP_MIB N TARGET. */
int fl_bench_peer_child(int argc, char **argv);
void fl_bench_peers_usage(FILE *f);

/* The worker, loop and call suites (worker.c, loop.c, call.c). */
int fl_bench_worker(int argc, char **argv);
void fl_bench_worker_usage(FILE *f);
int fl_bench_loop(int argc, char **argv);
void fl_bench_loop_usage(FILE *f);
int fl_bench_call(int argc, char **argv);
void fl_bench_call_usage(FILE *f);

/* The launch suite (launch.c): FL_NO_WAIT_EXEC against blocking spawns. */
int fl_bench_launch(int argc, char **argv);
void fl_bench_launch_usage(FILE *f);

/* The io suite (io.c): capture, fl_run and pipelines against their peers. */
int fl_bench_io(int argc, char **argv);
void fl_bench_io_usage(FILE *f);

/* The sandbox suite (sandbox.c): namespaces, Landlock and seccomp, against
 * the raw limit, fork() in C, unshare(1) and bwrap. */
int fl_bench_sandbox(int argc, char **argv);
void fl_bench_sandbox_usage(FILE *f);

/* Prints "forkless bench SUITE: MESSAGE" and a hint to --help on stderr;
 * returns 2 so that callers can `return fl_usage_error(...)`. */
__attribute__((format(printf, 2, 3)))
int fl_usage_error(const char *suite, const char *fmt, ...);

/* Matches argv[*i] against an option that takes a value, written
 * "NAME VALUE" or, for a long NAME, "NAME=VALUE". Returns 0 when it is
 * another option, 1 with *val set (and *i moved past the value), or -1 when
 * the value is missing (a usage error has been printed). */
int fl_opt_value(const char *suite, int argc, char **argv, int *i,
                 const char *name, const char **val);

/* fl_opt_value for an option whose value is a whole number in [min, max]
 * (see fl_parse_ulong). Returns 0 when it is another option, 1 with *out
 * set, or -1 for a missing or bad value (a usage error has been printed). */
int fl_opt_ulong(const char *suite, int argc, char **argv, int *i,
                 const char *name, unsigned long min, unsigned long max,
                 unsigned long *out);

/* Is --quick among the options? A suite sets its small counts before it
 * parses the rest, so that options given explicitly override them. */
int fl_opt_quick(int argc, char **argv);

/* The options every suite takes alike, at argv[*i]: --quick (skipped here:
 * see fl_opt_quick()), -h and --help (usage is printed to stdout), --csv
 * FILE and --json FILE (*csv or *json is set; see fl_opt_value()).
 * Returns 0 when it is another option, 1 when it matched, FL_OPT_HELP
 * after the help, or -1 for a missing or empty file name (a usage error
 * has been printed). */
#define FL_OPT_HELP 2
int fl_opt_common(const char *suite, int argc, char **argv, int *i, void (*usage)(FILE *),
                  const char **csv, const char **json);
/* Whether fl_opt_common() has printed a suite's help. */
int fl_opt_help_shown(void);

/* Matches --target T (see fl_opt_value) and sets *target. Returns 0 when
 * it is another option, 1 when it matched, or -1 for a missing or empty
 * value (a usage error has been printed). */
int fl_opt_target(const char *suite, int argc, char **argv, int *i, const char **target);

/* Parses a whole decimal number in [min, max]. Returns 0 or -1. */
int fl_parse_ulong(const char *s, unsigned long min, unsigned long max,
                   unsigned long *out);

/* Parses a comma list of such numbers into out[cap]. Returns the count, or
 * -1 for junk, an empty item, a value out of range, one given twice or too
 * many items. */
int fl_parse_ulong_list(const char *s, unsigned long min, unsigned long max,
                        unsigned long *out, size_t cap);

/* Splits a comma list of names in place (s is written to) into out[cap].
 * Returns the count, or -1 for an empty item, one given twice or too many
 * items. */
int fl_parse_name_list(char *s, const char **out, size_t cap);

/* The largest parent heap any suite makes, in MiB: 64 GiB, the largest the
 * seeds measure. */
#define FL_MAX_HEAP_MIB 65536ul

/* Parses --heap's value v, a comma list of at most cap distinct sizes in
 * MiB up to FL_MAX_HEAP_MIB, into heaps. Returns 0 with *n set, or 2 after
 * a usage error naming the value. */
int fl_opt_heaps(const char *suite, const char *v, unsigned long *heaps, size_t cap,
                 size_t *n);

#endif
