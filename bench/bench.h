/* bench.h: the entry point of `forkless bench`, linked into the CLI. */
#ifndef FL_BENCH_H
#define FL_BENCH_H

/* Runs `forkless bench [SUITE] [OPTIONS]`. argv[0] is "bench"; argv[1], if
 * present and not an option, names the suite (default "heap"). Prints the
 * table on stdout and progress on stderr. Returns the process exit status:
 * 0, 1 when a run failed, 2 for a usage error. */
int fl_bench_main(int argc, char **argv);

#endif
