/* helpers.h: small things the worker, loop and call suites share: finding
 * the bench's helper programs, resource-usage snapshots, summaries of plain
 * numbers, mean and spread. */
#ifndef FL_BENCH_HELPERS_H
#define FL_BENCH_HELPERS_H

#include <stddef.h>
#include <stdint.h>

/* Finds a helper program the build puts next to `tiny`: $ENVVAR, next to
 * the running executable, <exe dir>/../bench/NAME,
 * <exe dir>/../libexec/forkless/NAME, then build_path and install_path
 * (either may be NULL). Writes the real path to buf and returns 0, or
 * returns ENOENT. */
int fl_find_helper(const char *name, const char *envvar, const char *build_path,
                   const char *install_path, char *buf, size_t size);

/* fl_find_helper with the install tree's libexec/forkless/NAME (the build's
 * FL_HELPER_INSTALL_DIR) as install_path. */
int fl_find_bench_prog(const char *name, const char *envvar, const char *build_path,
                       char *buf, size_t size);

/* min / median / max of n plain numbers (sorted in place); zeros for n 0. */
struct fl_mmm {
    double min, median, max;
};
void fl_mmm_of(uint64_t *v, size_t n, struct fl_mmm *out);

/* Mean, sample standard deviation and standard deviation of the mean (what
 * `perf stat --repeat` prints after "+-") of n values. One value has no
 * spread: both deviations are then NaN (null in JSON), not 0. */
struct fl_spread {
    double mean, stddev, sem;
};
void fl_spread_of(const double *v, size_t n, struct fl_spread *out);

/* CPU time (user + system) and minor faults of this process (threads
 * included) and of its waited-for children, from getrusage(2). */
struct fl_usage {
    uint64_t self_cpu_ns, child_cpu_ns;
    long self_minflt, child_minflt;
};
void fl_usage_now(struct fl_usage *u);

/* Where name is first a whole item of the comma list, or NULL. */
const char *fl_list_find(const char *list, const char *name);

#endif
