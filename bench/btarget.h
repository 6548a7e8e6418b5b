/* btarget.h: resolving a suite's --target, shared by the threads and peers
 * suites. */
#ifndef FL_BENCH_BTARGET_H
#define FL_BENCH_BTARGET_H

#include <stddef.h>

/* Resolves t ("tiny", a path, or a bare name searched in $PATH) to an
 * absolute executable path in buf, its symlinks kept (argv[0] is it). *is_tiny says whether t was "tiny".
 * Returns 0, 1 when tiny was not found (message printed), or 2 for a bad
 * target (usage error printed). */
int fl_bench_target(const char *suite, const char *t, char *buf, size_t size,
                    int *is_tiny);

#endif
