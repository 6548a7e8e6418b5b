/* report.h: `forkless run --time`. */
#ifndef FL_TOOLS_REPORT_H
#define FL_TOOLS_REPORT_H

#include "forkless.h"

/* who: NULL, or what the figures are of, before them ("stage 2 (grep): ").
 * Prints, on stderr, one line of what the program used, as /usr/bin/time
 * would: "forkless: elapsed 1.024s user 0.500s sys 0.012s maxrss 3412KiB".
 * elapsed is the wall time from the spawn to the reap; user, sys and
 * maxrss are the program's and those of the descendants it waited for. */
void report_time(const char *who, const struct fl_result *r);

#endif
