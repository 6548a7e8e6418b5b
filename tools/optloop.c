/* optloop.c: reading the options of a `forkless` command. */
#include "optloop.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Of timeout(1)'s and env(1)'s long options (coreutils 9.1), the ones
 * forkless has too. */
#define TIMEOUT_NAMES "foreground", "kill-after", "preserve-status", "signal", "verbose", \
                      "help", "version"
const char *const timeout_option_names[] = { TIMEOUT_NAMES, NULL };
const char *const timeout_env_option_names[] = {
    TIMEOUT_NAMES, "ignore-environment", "unset", "chdir", "block-signal", "default-signal",
    "ignore-signal", NULL,
};

/* Two entries glibc's getopt_long() takes for one option (an alias). */
static bool same_option(const struct option *a, const struct option *b)
{
    return a->val == b->val && a->has_arg == b->has_arg && a->flag == b->flag;
}

const char *long_option_name(const struct option *table, int val)
{
    for (const struct option *o = table; o->name; o++)
        if (o->val == val)
            return o->name;
    return "?";
}

/* Says what is wrong with WORD, a long option ("--name" or
 * "--name=value") that getopt_long() refused: unknown, ambiguous (a
 * prefix of several), or given an argument it does not take. glibc tells
 * none of this apart, and gives no-argument options' short letter as
 * optopt, so the word itself is looked at. */
static void report_long_option(const struct option *table, const char *command,
                               const char *word)
{
    const char *name = word + 2;
    size_t len = strcspn(name, "=");
    bool has_value = name[len] == '=';
    const struct option *match = NULL;
    size_t nmatches = 0;
    for (const struct option *o = table; len > 0 && o->name; o++) {
        if (strncmp(o->name, name, len) != 0)
            continue;
        if (o->name[len] == '\0') {  /* exact: it wins over prefixes */
            match = o;
            nmatches = 1;
            break;
        }
        match = o;
        nmatches++;
    }
    if (nmatches == 1 && has_value && match->has_arg == no_argument) {
        cli_error("--%s takes no argument", match->name);
    } else if (nmatches > 1) {
        char list[512] = "";
        size_t used = 0;
        for (const struct option *o = table; o->name; o++) {
            if (strncmp(o->name, name, len) == 0 && used < sizeof list) {
                int n = snprintf(list + used, sizeof list - used, "%s--%s",
                                 used ? ", " : "", o->name);
                used += n > 0 ? (size_t)n : 0;
            }
        }
        cli_error("option --%.*s is ambiguous: %s (see forkless %s --help)",
                  (int)len, name, list, command);
    } else {
        cli_error("unknown option --%.*s (see forkless %s --help)",
                  (int)(len > 0 ? len : strlen(name)), name, command);
    }
}

/* The option of table that WORD ("--abbrev" or "--abbrev=value") names
 * when it abbreviates several but only one of them is named in
 * stands_in_for (timeout(1)'s and env(1)'s, where the abbreviation may be
 * unique): "--kill=1" is --kill-after, as timeout reads it, though
 * --kill-tree and --kill-with-parent start so too. NULL: none, or still
 * ambiguous (--i: --ignore-environment and --ignore-signal, as in env). */
static const struct option *drop_in_choice(const struct option *table,
                                           const char *const *stands_in_for, const char *word)
{
    const char *name = word + 2;
    size_t len = strcspn(name, "=");
    const struct option *choice = NULL, *first = NULL;
    bool several = false;
    for (const struct option *o = table; stands_in_for && len > 0 && o->name; o++) {
        if (strncmp(o->name, name, len) != 0)
            continue;
        if (o->name[len] == '\0')
            return NULL;  /* typed in full: refused for another reason */
        several |= first && !same_option(first, o);
        first = first ? first : o;
        for (const char *const *n = stands_in_for; *n; n++)
            if (strcmp(*n, o->name) == 0) {
                if (choice && !same_option(choice, o))
                    return NULL;
                choice = o;
            }
    }
    return several ? choice : NULL;
}

int read_options(int argc, char **argv, const char *shortopts, const struct option *table,
                 const char *const *stands_in_for, const char *command, option_fn apply,
                 void *ctx)
{
    /* "+": options end at PROGRAM, so its own options are left alone.
     * ":": report a missing argument as ':' instead of '?'. */
    opterr = 0;
    optind = 0;  /* 0, not 1: glibc then also forgets a half-read option cluster */
    int opt;
    /* Whether the next call starts a new word, or goes on with a cluster
     * of short options ("-iv"): getopt_long() leaves optind on a word
     * until it is done with it. */
    bool new_word = true;
    int word = 1;
    for (;;) {
        if (new_word)
            word = optind > 0 ? optind : 1;
        opt = getopt_long(argc, argv, shortopts, table, NULL);
        if (opt == -1)
            break;
        new_word = optind != word;
        if (opt == ':') {
            /* Name it as it was typed: --chdir or -C. An argument is
             * missing only when the option is the last word; optind is no
             * guide (musl leaves it one past the end after a short option). */
            if (strncmp(argv[argc - 1], "--", 2) == 0)
                cli_error("%s needs an argument", argv[argc - 1]);
            else
                cli_error("-%c needs an argument", optopt);
            return EXIT_FORKLESS_ERROR;
        }
        if (opt == '?') {
            /* A long option is a word of its own, never in a cluster. */
            bool in_cluster = !(word < argc && strncmp(argv[word], "--", 2) == 0);
            const struct option *o = in_cluster ? NULL : drop_in_choice(table, stands_in_for,
                                                                        argv[word]);
            char *full = NULL;
            if (o && asprintf(&full, "--%s%s", o->name, argv[word] + 2 + strcspn(argv[word] + 2,
                                                                               "=")) > 0) {
                argv[word] = full;  /* as long as argv: read again as typed in full */
                optind = word;
                new_word = true;
                continue;
            }
            if (!in_cluster)
                report_long_option(table, command, argv[word]);
            else if (optopt > 0 && optopt < 256)
                cli_error("unknown option -%c (see forkless %s --help)", optopt, command);
            else
                cli_error("unknown option %s (see forkless %s --help)", argv[word], command);
            return EXIT_FORKLESS_ERROR;
        }
        int r = apply(ctx, opt, optarg);
        if (r != 0)
            return r > 0 ? 0 : EXIT_FORKLESS_ERROR;
    }
    return -1;
}
