/* stats.h: timing, sample summaries, interleaving and JSON rows, shared by
 * every bench suite. */
#ifndef FL_BENCH_STATS_H
#define FL_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t fl_bench_now_ns(void);

/* min / median / max of a set of samples, in microseconds. */
struct fl_summary {
    size_t n;
    double min_us;
    double median_us;
    double max_us;
};

/* Summarises n samples (nanoseconds). Sorts the array in place. n may be 0:
 * every field is then 0. */
void fl_summarize(uint64_t *ns, size_t n, struct fl_summary *out);

/* Interleaving: in round i of `rounds`, should an arm that takes only
 * `want` samples (want <= rounds) take one? Spreads the samples evenly over
 * the rounds, so an arm with fewer samples still sees the same conditions
 * as the others. */
int fl_interleave_take(size_t i, size_t rounds, size_t want);

/* Interleaving: the order of the arms in one round, a fresh random
 * permutation of 0..narms-1 each round (Fisher-Yates, from *seed, which it
 * advances). A fixed or merely rotated order would make one arm always run
 * right after another, and some arms leave work behind for the next spawn
 * (after fork_exec the parent takes copy-on-write faults on its stack and
 * data), so every arm gets each neighbour equally often instead. */
void fl_interleave_order(size_t *order, size_t narms, uint64_t *seed);

/* A minimal JSON writer for {"suite": ..., <header fields>, "rows": [...]}:
 *
 *     struct fl_json j;
 *     fl_json_open(&j, path, "heap");      header fields: fl_json_str...
 *     fl_json_rows(&j);
 *     fl_json_row(&j); fl_json_str(&j, "method", "forkless"); ...
 *     fl_json_close(&j);
 *
 * Every call is a no-op on a writer whose open failed or that was never
 * opened (f == NULL), so a suite can call them unconditionally. */
struct fl_json {
    FILE *f;
    int depth;      /* 1: top object, 2: inside a row */
    int first;      /* no member written yet at this level */
    int first_row;
    int in_rows;
};

/* Opens path and starts the top object with "suite". Returns 0 or an errno
 * value. A NULL path leaves j closed (every call a no-op) and returns 0. */
int fl_json_open(struct fl_json *j, const char *path, const char *suite);
/* Starts the "rows" array; later members go to rows. */
void fl_json_rows(struct fl_json *j);
/* Starts a new row object (ending the previous one). */
void fl_json_row(struct fl_json *j);
void fl_json_str(struct fl_json *j, const char *key, const char *val);
void fl_json_num(struct fl_json *j, const char *key, double val);  /* NaN -> null */
void fl_json_int(struct fl_json *j, const char *key, long long val);
/* Ends everything and closes the file. Returns 0 or an errno value. */
int fl_json_close(struct fl_json *j);

#endif
