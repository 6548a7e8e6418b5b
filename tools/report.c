/* report.c: `forkless run --time` and `forkless pipe --time`, from the figures of fl_wait_result(). */
#include "report.h"

#include <sys/resource.h>

#include "cli.h"

static double seconds(const struct timeval *tv)
{
    return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

void report_time(const char *who, const struct fl_result *r)
{
    /* Linux gives ru_maxrss in KiB. */
    cli_error("%s%selapsed %.3fs user %.3fs sys %.3fs maxrss %ldKiB", who ? who : "", who ? ": " : "", (double)r->elapsed_ns / 1e9,
              seconds(&r->rusage.ru_utime), seconds(&r->rusage.ru_stime),
              (long)r->rusage.ru_maxrss);
}
