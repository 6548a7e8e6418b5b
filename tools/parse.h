/* parse.h: strict parsers for the values of `forkless run` options.
 *
 * Each returns 0 on success, or -1 when the text is malformed or out of
 * range; the caller prints the message (it knows the option's name). */
#ifndef FL_TOOLS_PARSE_H
#define FL_TOOLS_PARSE_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

/* The longest duration, in milliseconds (about 146 million years): far
 * enough from INT64_MAX that a deadline "now + duration" cannot overflow. */
#define DURATION_MAX_MS (INT64_MAX / 4)

/* "1.5", "2.34e+5", "250ms", "2s", "3m", "1h", "1d": a non-negative
 * decimal number, with an optional exponent, and an optional unit (ms, s,
 * m, h, d; none means seconds). Rounded up to whole milliseconds, exactly,
 * whatever the number of digits: a positive duration never becomes 0. A
 * longer one than DURATION_MAX_MS is DURATION_MAX_MS. */
int parse_duration_ms(const char *text, int64_t *ms);

/* A non-negative decimal int ("0", "17"), no sign, no spaces. */
int parse_fd_number(const char *text, int *fd);

/* A decimal int within min..max, with an optional sign ("-5", "+3",
 * "19"), no spaces. */
int parse_int_in(const char *text, int min, int max, int *out);

/* A uid or gid: decimal, below (uid_t)-1, which means "no change". */
int parse_id(const char *text, unsigned *id);

/* "CHILD=PARENT", both fd numbers. */
int parse_fd_map(const char *text, int *child_fd, int *parent_fd);

/* An octal mode between 0 and 0777 ("022", "0077"). */
int parse_umask(const char *text, mode_t *mask);

/* A resource name as prlimit(1) spells it (NOFILE, core, ...), any case.
 * Returns the RLIMIT_* number, or -1. */
int rlimit_resource_by_name(const char *name);

/* "NAME=SOFT[:HARD]", each value a decimal number or "unlimited". SOFT
 * alone sets both. An empty SOFT or HARD ("NAME=:10", "NAME=10:") keeps
 * the current value of that limit, as prlimit(1) does. Returns 0, -1 for
 * a malformed value, or -2 for an unknown name. */
int parse_rlimit(const char *text, int *resource, rlim_t *soft, rlim_t *hard);

#endif
