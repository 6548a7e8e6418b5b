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
#include <sys/stat.h>

#include "cpu.h"
#include "helpers.h"
#include "machine.h"
#include "suite.h"

const struct fl_suite fl_suites[] = {
    { "heap", "spawn cost against the parent's resident heap (fork vs vfork "
              "vs posix_spawn vs clone vs forkless)",
      fl_bench_heap, fl_bench_heap_usage, 0 },
    { "threads", "spawns/s from T threads at once (posix_spawn vs forkless vs fork_exec)", fl_bench_threads, fl_bench_threads_usage, 1 },
    { "peers", "forkless against other runtimes' spawn APIs (Python, Node, Rust, Java, libuv, GLib)", fl_bench_peers, fl_bench_peers_usage, 0 },
    { "worker", "a worker fed through a shared ring while the parent writes its heap (thread vs fork vs fork_exec vs posix_spawn vs forkless)", fl_bench_worker, fl_bench_worker_usage, 1 },
    { "loop", "start `true` 10000 times in a row (fork vs vfork + execvp vs posix_spawnp vs forkless)", fl_bench_loop, fl_bench_loop_usage, 0 },
    { "call", "N + 2 as a program (fork_exec, posix_spawn, forkless; dynamic vs static) vs a function call", fl_bench_call, fl_bench_call_usage, 0 },
    { "launch", "spawns/s from one thread keeping K children in flight (FL_NO_WAIT_EXEC) vs blocking fl_spawn and posix_spawn; the caller's blocked time", fl_bench_launch, fl_bench_launch_usage, 1 },
    { "io", "capture MiB/s (read loop, popen, Python, Rust, fl_run), fl_run vs system() vs posix_spawn, a 4-stage pipeline vs sh -c", fl_bench_io, fl_bench_io_usage, 0 },
    { "sandbox", "a spawn in new user+mount+PID+net namespaces, and one under Landlock + seccomp, at 0-4 GiB heaps (raw clone limit vs fork in C vs unshare(1) vs bwrap)", fl_bench_sandbox, fl_bench_sandbox_usage, 0 },
};
const size_t fl_nsuites = sizeof fl_suites / sizeof fl_suites[0];

/* The options that every suite takes, handled here. */
static void common_usage(FILE *f)
{
    fprintf(f,
        "Options of every suite:\n"
        "  --cpu N|auto|all  the CPU the suite runs on, with its children (default\n"
        "                  auto: the last one this process may use). Left to the\n"
        "                  scheduler (all), a child is moved to another CPU at exec\n"
        "                  whenever that one looks idle, which adds tens of us to some\n"
        "                  spawns and not others. threads, launch and worker need\n"
        "                  every CPU: threads pins its threads one per CPU in turn\n"
        "                  instead, as launch does its 2-thread arm's (all: not),\n"
        "                  worker is left alone; N must still be a CPU this process\n"
        "                  may use. Pinned, a timed spawn during which something\n"
        "                  else used the CPU is taken again (heap, call, sandbox's\n"
        "                  filter). At the end a line says how much of the CPU(s)\n"
        "                  others took meanwhile: other tasks, interrupts, the\n"
        "                  hypervisor.\n");
}

/* Runs suite s with argv[0] its name: pinned to cpu unless it needs every
 * CPU, and watched, so that the last line says who else used the CPU. */
/* Whether the suite's options ask for its help: a -h or --help where an
 * option stands, not as the value of one (--json --help names a file).
 * Every option of the suites takes a value, in the next word unless
 * written NAME=VALUE or -nVALUE, but these. */
static int asks_for_help(int argc, char **argv)
{
    static const char *const flags[] = { "--quick", "--overcommit-demo" };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        /* -n5: a short option with its value attached (fl_opt_value()) */
        int flag = a[0] != '-' || strchr(a, '=') != NULL || (a[1] != '-' && a[1] && a[2]);
        for (size_t k = 0; k < sizeof flags / sizeof *flags; k++)
            flag |= strcmp(a, flags[k]) == 0;
        i += !flag;
    }
    return 0;
}

static int run_suite(const struct fl_suite *s, int argc, char **argv, int cpu)
{
    int help = asks_for_help(argc, argv);
    struct fl_cpu_pin pin;
    char err[256];
    if (!help && fl_cpu_pin(s->all_cpus ? FL_CPU_ALL : cpu, &pin, err, sizeof err) != 0)
        return fl_usage_error(s->name, "--cpu: %s", err);
    /* A suite that needs every CPU does not pin, but a CPU it may not use
     * is still a mistake to say. */
    if (!help && s->all_cpus && cpu >= 0) {
        if (fl_cpu_pin(cpu, &pin, err, sizeof err) != 0)
            return fl_usage_error(s->name, "--cpu: %s", err);
        fl_cpu_unpin(&pin);
    }
    fl_cpu_spread(!help && s->all_cpus && cpu != FL_CPU_ALL);
    struct fl_cpu_watch w;
    fl_cpu_watch_start(&w);
    fflush(stdout);
    fl_mem_left_out_clear();  /* what an earlier suite left out is not this one's */
    int r = s->main(argc, argv);
    fflush(stdout);
    int spread = fl_cpu_spreading();
    fl_cpu_spread(0);
    if (help) {
        if (fl_opt_help_shown()) {  /* not after a usage error before it */
            fputc('\n', stdout);
            common_usage(stdout);
        }
        return r;
    }
    struct fl_cpu_share sh;
    fl_cpu_watch_stop(&w, &sh);
    char set[64];
    fl_cpu_set_name(&w, set, sizeof set);
    if (r == 0)
        printf("cpu: %s (%s); over the %.1f s of the suite others took %.1f%% of it "
               "(other tasks, interrupts, the hypervisor; steal seen %.1f%%)\n", set,
               pin.cpu >= 0 ? "pinned, with the children" :
               spread ? "the suite needs every CPU: its threads spread one per CPU" :
               s->all_cpus ? "not pinned: the suite needs every CPU" : "not pinned: --cpu all",
               sh.seconds, sh.others_pct, sh.steal_pct);
    fflush(stdout);
    fl_cpu_unpin(&pin);
    return r;
}

/* Takes "--cpu V" / "--cpu=V" out of argv[1..*argc-1] (the last one counts).
 * Returns 0, or 2 after a usage error. */
static int take_cpu(const char *suite, int *argc, char **argv, int *cpu)
{
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *v;
        int m = fl_opt_value(suite, *argc, argv, &i, "--cpu", &v);
        if (m < 0)
            return 2;
        if (m == 0) {
            argv[out++] = argv[i];
            continue;
        }
        if (fl_cpu_parse(v, cpu) != 0)
            return fl_usage_error(suite, "--cpu wants a CPU number, auto or all, not "
                                  "\"%s\"", v);
    }
    *argc = out;
    argv[out] = NULL;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: forkless bench [SUITE] [OPTIONS]\n"
               "       forkless bench SUITE --help\n\n"
               "Reproduces the seed experiments on this machine and prints a table.\n"
               "Without SUITE, runs \"%s\" with its defaults.\n\nSuites:\n",
            fl_suites[0].name);
    for (size_t i = 0; i < fl_nsuites; i++)
        fprintf(f, "  %-8s %s\n", fl_suites[i].name, fl_suites[i].what);
    fprintf(f, "  %-8s every suite above with small counts (see: forkless bench all --help)\n",
            "all");
    fputc('\n', f);
    common_usage(f);
}

/* `forkless bench all [--out DIR] [--full] [--suites LIST]`: every suite of
 * fl_suites[] (or those in LIST) in turn, each called as
 *   NAME --quick [--json DIR/NAME.json --csv DIR/NAME.csv]
 * (--full leaves out --quick). Returns 0 when every suite returned 0, else
 * the largest status. */
static int bench_all(int argc, char **argv)
{
    const char *out = NULL, *only = NULL;
    int quick = 1, cpu = FL_CPU_AUTO;
    if (take_cpu("all", &argc, argv, &cpu) != 0)
        return 2;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int m;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: forkless bench all [--out DIR] [--quick|--full] [--suites LIST] "
                   "[--cpu N]\n\n"
                   "Runs every suite with small counts: each is called as\n"
                   "  forkless bench SUITE --quick [--json DIR/SUITE.json --csv DIR/SUITE.csv]\n"
                   "  --out DIR   write each suite's rows to DIR/SUITE.json and DIR/SUITE.csv\n"
                   "              (DIR is created when missing)\n"
                   "  --quick     small counts: the default\n"
                   "  --full      the suites' own defaults instead of --quick\n"
                   "  --suites LIST  only these suites, comma separated (default: all)\n"
                   "  --cpu N|auto|all  passed on to every suite (see forkless bench --help)\n");
            return 0;
        }
        if ((m = fl_opt_value("all", argc, argv, &i, "--out", &v))) {
            if (m < 0)
                return 2;
            if (!*v)
                return fl_usage_error("all", "--out wants a directory");
            out = v;
        } else if (strcmp(argv[i], "--full") == 0) {
            quick = 0;
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;  /* the default: as every suite takes it */
        } else if ((m = fl_opt_value("all", argc, argv, &i, "--suites", &v))) {
            if (m < 0)
                return 2;
            only = v;
        } else {
            return fl_usage_error("all", "unknown option \"%s\"", argv[i]);
        }
    }
    for (const char *p = only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        int len = (int)(strchr(p, ',') ? (size_t)(strchr(p, ',') - p) : strlen(p));
        size_t k = 0;
        while (k < fl_nsuites && (strncmp(fl_suites[k].name, p, (size_t)len) != 0 ||
                                  fl_suites[k].name[len] != '\0'))
            k++;
        if (k == fl_nsuites)
            return fl_usage_error("all", "--suites \"%s\": \"%.*s\" is not a suite (see "
                                  "forkless bench --help)", only, len, p);
        if (fl_list_find(only, fl_suites[k].name) != p)
            return fl_usage_error("all", "--suites \"%s\": names \"%s\" twice", only,
                                  fl_suites[k].name);
    }
    /* A CPU this process may not use is said once, before any suite runs. */
    if (cpu >= 0) {
        struct fl_cpu_pin pin;
        char err[256];
        if (fl_cpu_pin(cpu, &pin, err, sizeof err) != 0)
            return fl_usage_error("all", "--cpu: %s", err);
        fl_cpu_unpin(&pin);
    }
    if (out && mkdir(out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "forkless bench all: mkdir %s: %s\n", out, strerror(errno));
        return 1;
    }
    int worst = 0, ran = 0;
    for (size_t k = 0; k < fl_nsuites; k++) {
        const struct fl_suite *s = &fl_suites[k];
        if (only && !fl_list_find(only, s->name))
            continue;
        char json[4096], csv[4096];
        char *sargv[8];
        int n = 0;
        sargv[n++] = (char *)s->name;
        if (quick)
            sargv[n++] = "--quick";
        if (out) {
            snprintf(json, sizeof json, "%s/%s.json", out, s->name);
            snprintf(csv, sizeof csv, "%s/%s.csv", out, s->name);
            sargv[n++] = "--json";
            sargv[n++] = json;
            sargv[n++] = "--csv";
            sargv[n++] = csv;
        }
        sargv[n] = NULL;
        printf("%s== forkless bench %s%s%s%s%s%s ==\n", ran++ ? "\n" : "", s->name,
               quick ? " --quick" : "", out ? " --json " : "", out ? json : "",
               out ? " --csv " : "", out ? csv : "");
        int r = run_suite(s, n, sargv, cpu);
        if (r != 0)
            fprintf(stderr, "forkless bench all: %s exited %d\n", s->name, r);
        if (r > worst)
            worst = r;
    }
    return worst;
}

int fl_bench_main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "all") == 0)
        return bench_all(argc - 1, argv + 1);
    /* Not a suite: what the peers suite runs as its forkless peer, in the
     * CPU placement it inherits and printing only the peer's lines. */
    if (argc > 1 && strcmp(argv[1], "--peer-child") == 0)
        return fl_bench_peer_child(argc - 1, argv + 1);
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
    /* Give the suite an argv whose [0] is its name, without --cpu. */
    int sargc = argc - first, cpu = FL_CPU_AUTO;
    char **sargv = calloc((size_t)sargc + 1, sizeof *sargv);
    if (!sargv) {
        fprintf(stderr, "forkless bench: %s\n", strerror(errno));
        return 1;
    }
    sargv[0] = (char *)s->name;
    for (int i = 1; i < sargc; i++)
        sargv[i] = argv[first + i];
    int r = take_cpu(s->name, &sargc, sargv, &cpu);
    if (r == 0)
        r = run_suite(s, sargc, sargv, cpu);
    free(sargv);
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

int fl_opt_ulong(const char *suite, int argc, char **argv, int *i,
                 const char *name, unsigned long min, unsigned long max,
                 unsigned long *out)
{
    const char *v;
    int m = fl_opt_value(suite, argc, argv, i, name, &v);
    if (m <= 0)
        return m;
    if (fl_parse_ulong(v, min, max, out) != 0) {
        fl_usage_error(suite, "%s wants a whole number from %lu to %lu, not \"%s\"",
                       name, min, max, v);
        return -1;
    }
    return 1;
}

int fl_opt_quick(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0)
            return 1;
    return 0;
}

int fl_opt_target(const char *suite, int argc, char **argv, int *i, const char **target)
{
    const char *v;
    int m = fl_opt_value(suite, argc, argv, i, "--target", &v);
    if (m <= 0)
        return m;
    if (!*v) {
        fl_usage_error(suite, "--target is empty");
        return -1;
    }
    *target = v;
    return 1;
}

static int help_shown;

int fl_opt_help_shown(void)
{
    return help_shown;
}

int fl_opt_common(const char *suite, int argc, char **argv, int *i, void (*usage)(FILE *),
                  const char **csv, const char **json)
{
    const char *a = argv[*i];
    if (strcmp(a, "--quick") == 0)
        return 1;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
        usage(stdout);
        help_shown = 1;
        return FL_OPT_HELP;
    }
    static const char *const names[] = { "--csv", "--json" };
    const char **out[] = { csv, json };
    for (size_t k = 0; k < 2; k++) {
        const char *v;
        int m = fl_opt_value(suite, argc, argv, i, names[k], &v);
        if (m == 0)
            continue;
        if (m < 0)
            return -1;
        if (!*v) {
            fl_usage_error(suite, "%s wants a file name", names[k]);
            return -1;
        }
        *out[k] = v;
        return 1;
    }
    return 0;
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
        for (size_t k = 0; k < n; k++)
            if (out[k] == out[n])
                return -1;  /* a row twice, under one name */
        n++;
        if (!end)
            return (int)n;
        s = end + 1;
    }
}

int fl_opt_heaps(const char *suite, const char *v, unsigned long *heaps, size_t cap,
                 size_t *n)
{
    int got = fl_parse_ulong_list(v, 0, FL_MAX_HEAP_MIB, heaps, cap);
    if (got < 0)
        return fl_usage_error(suite, "--heap wants a comma list of at most %zu distinct sizes "
                              "in MiB, each from 0 to %lu (64 GiB), not \"%s\"", cap,
                              FL_MAX_HEAP_MIB, v);
    *n = (size_t)got;
    return 0;
}

int fl_parse_name_list(char *s, const char **out, size_t cap)
{
    size_t n = 0;
    for (;;) {
        char *end = strchr(s, ',');
        if (end)
            *end = '\0';
        if (!*s || n == cap)
            return -1;
        for (size_t k = 0; k < n; k++)
            if (strcmp(out[k], s) == 0)
                return -1;
        out[n++] = s;
        if (!end)
            return (int)n;
        s = end + 1;
    }
}
