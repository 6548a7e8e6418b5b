/* trun.h: T threads of one parent running one arm at once, shared by the
 * threads and launch suites. */
#ifndef FL_BENCH_TRUN_H
#define FL_BENCH_TRUN_H

#include "arms.h"

/* Starts nthr threads (at most FL_TRUN_MAX_THREADS), each pinned with
 * fl_cpu_pin_thread (cpu.h) to the next CPU in turn, releases them at once,
 * and has each run arm on t over and over: n times (n > 0), or until
 * seconds have passed (n 0). *rate gets the spawns of all threads per
 * second of wall time, *spawns their count. Returns 0, or 1 with a message
 * "forkless bench SUITE: ARM: ..." on stderr. */
#define FL_TRUN_MAX_THREADS 1024
int fl_trun(const char *suite, const struct fl_arm *arm, const struct fl_arm_target *t,
            unsigned long nthr, unsigned long n, double seconds, double *rate,
            unsigned long *spawns);

#endif
