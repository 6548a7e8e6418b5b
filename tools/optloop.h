/* optloop.h: the getopt_long() loop that `forkless run` and `forkless
 * pipe` share, with messages that say what is wrong with an option. */
#ifndef FL_TOOLS_OPTLOOP_H
#define FL_TOOLS_OPTLOOP_H

#include <getopt.h>

/* Applies option opt (its argument arg, or NULL). Returns 0 to go on, 1
 * to end with exit status 0 (--help), -1 after printing why (125). */
typedef int (*option_fn)(void *ctx, int opt, const char *arg);

/* Reads the options of `forkless COMMAND` from argv (argv[0] is COMMAND)
 * up to the first operand, shortopts starting with "+:". An abbreviated
 * long option that several share, of which one alone is named in
 * stands_in_for (NULL-terminated; may be NULL), is that one. Returns -1
 * with optind at the first operand, or the exit status: 0, or 125 after
 * a message. */
int read_options(int argc, char **argv, const char *shortopts, const struct option *table,
                 const char *const *stands_in_for, const char *command, option_fn apply,
                 void *ctx);

/* Of the long options of timeout(1), and of those with env(1)'s, the
 * ones forkless has: stands_in_for for `forkless pipe` and `forkless run`. */
extern const char *const timeout_option_names[];
extern const char *const timeout_env_option_names[];

/* The long name of option val in table ("chdir"), or "?". */
const char *long_option_name(const struct option *table, int val);

#endif
