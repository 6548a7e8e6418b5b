/* bench.c: `forkless bench [SUITE] [OPTIONS]`: dispatch to a suite, and the
 * option helpers the suites share. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "suite.h"

const struct fl_suite fl_suites[] = {
    { "heap", "spawn cost against the parent's resident heap (fork vs vfork "
              "vs posix_spawn vs clone vs forkless)",
      fl_bench_heap, fl_bench_heap_usage },
};
const size_t fl_nsuites = sizeof fl_suites / sizeof fl_suites[0];

static void usage(FILE *f)
{
    fprintf(f, "usage: forkless bench [SUITE] [OPTIONS]\n"
               "       forkless bench SUITE --help\n\n"
               "Reproduces the seed experiments on this machine and prints a table.\n"
               "Without SUITE, runs \"%s\" with its defaults.\n\nSuites:\n",
            fl_suites[0].name);
    for (size_t i = 0; i < fl_nsuites; i++)
        fprintf(f, "  %-8s %s\n", fl_suites[i].name, fl_suites[i].what);
}

int fl_bench_main(int argc, char **argv)
{
    const struct fl_suite *s = &fl_suites[0];
    int first = 1;   /* the suite's argv[0] */
    if (argc > 1 && argv[1][0] != '-') {
        s = NULL;
        for (size_t i = 0; i < fl_nsuites; i++)
            if (strcmp(fl_suites[i].name, argv[1]) == 0)
                s = &fl_suites[i];
        if (!s) {
            fprintf(stderr, "forkless bench: unknown suite \"%s\"\n\n", argv[1]);
            usage(stderr);
            return 2;
        }
    } else if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        fputc('\n', stdout);
        fl_suites[0].usage(stdout);
        return 0;
    } else {
        first = 0;   /* options straight after "bench" go to the default suite */
    }
    /* Give the suite an argv whose [0] is its name. */
    int sargc = argc - first;
    char **sargv = calloc((size_t)sargc + 1, sizeof *sargv);
    if (!sargv) {
        fprintf(stderr, "forkless bench: %s\n", strerror(errno));
        return 1;
    }
    sargv[0] = (char *)s->name;
    for (int i = 1; i < sargc; i++)
        sargv[i] = argv[first + i];
    fflush(stdout);
    int r = s->main(sargc, sargv);
    free(sargv);
    fflush(stdout);
    return r;
}

int fl_usage_error(const char *suite, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "forkless bench %s: ", suite);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(try: forkless bench %s --help)\n", suite);
    return 2;
}

int fl_opt_value(const char *suite, int argc, char **argv, int *i,
                 const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t len = strlen(name);
    if (strncmp(a, name, len) != 0)
        return 0;
    if (a[len] == '=' && name[1] == '-') {
        *val = a + len + 1;
        return 1;
    }
    if (a[len] != '\0' && name[1] != '-') {   /* -n50 */
        *val = a + len;
        return 1;
    }
    if (a[len] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        fl_usage_error(suite, "option %s needs a value", name);
        return -1;
    }
    *val = argv[++*i];
    return 1;
}

int fl_parse_ulong(const char *s, unsigned long min, unsigned long max,
                   unsigned long *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int fl_parse_ulong_list(const char *s, unsigned long min, unsigned long max,
                        unsigned long *out, size_t cap)
{
    size_t n = 0;
    for (;;) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        char item[32];
        if (len == 0 || len >= sizeof item || n == cap)
            return -1;
        memcpy(item, s, len);
        item[len] = '\0';
        if (fl_parse_ulong(item, min, max, &out[n]) != 0)
            return -1;
        n++;
        if (!end)
            return (int)n;
        s = end + 1;
    }
}
