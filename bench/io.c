/* io.c: the "io" suite. The convenience calls against what they replace,
 * in three parts, each interleaved in one run with min/median/max:
 *   capture   MiB/s taken from a writer (fl-writer MIB) that writes MIB MiB
 *             to its stdout: a plain read() loop (the limit), popen(),
 *             Python's subprocess.run(capture_output=True), Rust's
 *             Command::output(), forkless's fl_run() capture;
 *   run       start tiny and wait: posix_spawn() + waitpid(), system(),
 *             fl_spawn() + fl_wait(), fl_run();
 *   pipeline  start tiny | tiny | tiny | tiny and wait: 4 posix_spawn()s
 *             wired by hand, /bin/sh -c, fl_pipeline_run().
 * The arms are in io_arms.c; the Python and Rust peers (bench/peers/) time
 * their own captures, so that the interpreter's start-up is not counted. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forkless.h"
#include "helpers.h"
#include "io_arms.h"
#include "machine.h"
#include "peerrun.h"
#include "stats.h"
#include "suite.h"

#define SUITE "io"
#define DEFAULT_MIB 64ul
#define DEFAULT_CAPTURES 30ul
#define DEFAULT_ROUNDS 10ul
#define DEFAULT_N 300ul
/* A capture holds its bytes twice at the most: a buffer that doubles
 * (read_loop, popen, fl_capture, Rust's Vec) copies them as it grows, and
 * Python joins its chunks into one bytes object. */
#define CAPTURE_COPIES 2ul
#define MEM_MARGIN_MIB 512ul   /* the writer, a runtime, the rest */

#ifndef FL_WRITER_PATH
#define FL_WRITER_PATH NULL   /* the build's fl-writer (CMake) */
#endif
#ifndef FL_PEER_RUST_BUILT
#define FL_PEER_RUST_BUILT 0
#endif

/* retakes: how often a disturbed sample is taken again (see fl_sample_upto).
 * Never for capture: its peers time their own captures, which cannot be
 * taken again, and the arms they are compared with must be taken alike. */
static const struct {
    const char *name;
    const char *unit;
    int rate;           /* shown as MiB/s, ratios of rates */
    int retakes;
} parts[FL_BIO_NPARTS] = {
    [FL_BIO_CAPTURE] = { "capture", "MiB/s", 1, 0 },
    [FL_BIO_RUN] = { "run", "us", 0, FL_RETAKES },
    [FL_BIO_PIPELINE] = { "pipeline", "us", 0, FL_RETAKES },
};

/* What the issue asks of the forkless arms: arm's ratio to than (of MiB/s
 * for capture, of time otherwise) is at least (op '>') or at most ('<')
 * bound. */
static const struct {
    const char *arm, *than;
    char op;
    double bound;
    const char *what;
} goals[] = {
    { "fl_capture", "read_loop", '>', 0.90, "capture >= 0.9x the plain read loop's MiB/s" },
    { "fl_capture", "python", '>', 1.0, "capture faster than Python" },
    { "fl_capture", "rust", '>', 1.0, "capture faster than Rust" },
    { "fl_run", "posix_spawn", '<', 1.05, "fl_run <= 1.05x posix_spawn + waitpid" },
    { "system", "fl_run", '>', 1.0, "system() slower than fl_run" },
    { "sh_pipeline", "fl_pipeline", '>', 1.0, "sh -c 'a|b|c|d' slower than fl_pipeline_run" },
};

struct opts {
    unsigned long mib, captures, rounds, n;
    const char *json, *csv;
};

struct arm {
    const struct fl_bio_arm *a;
    int present;
    char skip[256];          /* why it is not present */
    char failed[512];        /* why a peer failed during the run */
    char prog[PATH_MAX];     /* a peer: the runtime or the binary */
    char script[PATH_MAX];   /* a peer's script, or "" */
    char version[256];
    uint64_t *ns;
    size_t got;
    struct fl_retakes rt;
    struct fl_summary s;
    double ratio;            /* to its part's reference; NaN when not measured */
};

void fl_bench_io_usage(FILE *f)
{
    fprintf(f,
        "usage: forkless bench io [OPTIONS]\n\n"
        "The convenience calls against what they replace, in three parts, each\n"
        "interleaved (every round each arm of the part in a fresh random order):\n"
        "  capture   MiB/s of a writer's stdout taken whole (fl-writer MIB writes\n"
        "            MIB MiB with 1 MiB write()s); ratios of MiB/s to read_loop's\n"
        "  run       us to start tiny and wait for it; ratios of time to posix_spawn's\n"
        "  pipeline  us to start tiny | tiny | tiny | tiny and wait; ratios of time\n"
        "            to posix_spawn_pipes'\n"
        "Every capture's bytes and every exit status are checked. A run or pipeline\n"
        "sample during which something else took the CPU is taken again, at most\n"
        "twice (retaken); a capture never is, as the peers time their own. The\n"
        "Python and Rust peers are programs that time their own captures (each runs\n"
        "once untimed first), so their start-up is not counted; a peer that is\n"
        "missing is listed as skipped, one still running at its deadline (%lu s and\n"
        "more, scaled to its captures; FORKLESS_PEER_TIMEOUT=SECONDS sets another)\n"
        "is killed and has failed. At the end a line per goal of the issue: met or\n"
        "not.\n\n"
        "Options:\n"
        "  --mib N         MiB the writer writes (default %lu); a capture holds them\n"
        "                  twice at the most, and twice N over the free memory less\n"
        "                  %lu MiB is refused\n"
        "  --captures N    samples per capture arm (default %lu)\n"
        "  --rounds R      rounds the captures are split into (default %lu; at most\n"
        "                  --captures): a peer is started once a round\n"
        "  -n N            samples per arm of run and pipeline (default %lu)\n"
        "  --quick         small counts: --mib 8 --captures 6 --rounds 3 -n 40\n"
        "                  (each unless given); what `forkless bench all` passes\n"
        "  --json FILE     also write the rows as JSON\n"
        "  --csv FILE      also write the rows as CSV (a header line, then one\n"
        "                  line per row)\n"
        "  -h, --help      this text\n\n"
        "Arms:\n", FL_PEER_START_S, DEFAULT_MIB, MEM_MARGIN_MIB, DEFAULT_CAPTURES,
        DEFAULT_ROUNDS, DEFAULT_N);
    for (size_t i = 0; i < fl_bio_narms; i++)
        fprintf(f, "  %-8s %-17s %s\n", parts[fl_bio_arms[i].part].name,
                fl_bio_arms[i].name, fl_bio_arms[i].what);
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .mib = DEFAULT_MIB, .captures = DEFAULT_CAPTURES,
                        .rounds = DEFAULT_ROUNDS, .n = DEFAULT_N };
    if (fl_opt_quick(argc, argv))
        *o = (struct opts){ .mib = 8, .captures = 6, .rounds = 3, .n = 40 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if ((m = fl_opt_common(SUITE, argc, argv, &i, fl_bench_io_usage, &o->csv, &o->json))) {
            if (m != 1)
                return m < 0 ? 2 : 0;
            continue;
        }
        if ((m = fl_opt_ulong(SUITE, argc, argv, &i, "--mib", 1, 65536, &o->mib)) ||
            (m = fl_opt_ulong(SUITE, argc, argv, &i, "--captures", 1, 100000, &o->captures)) ||
            (m = fl_opt_ulong(SUITE, argc, argv, &i, "--rounds", 1, 10000, &o->rounds)) ||
            (m = fl_opt_ulong(SUITE, argc, argv, &i, "-n", 1, 10000000, &o->n))) {
            if (m < 0)
                return 2;
        } else {
            return fl_usage_error(SUITE, "unknown option \"%s\"", a);
        }
    }
    return -1;
}

/* s in single quotes for /bin/sh, appended to buf. */
static void sh_quote(char *buf, size_t size, const char *s)
{
    size_t len = strlen(buf);
    len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "'");
    for (; *s && len < size; s++)
        len += (size_t)snprintf(buf + len, size - len, *s == '\'' ? "'\\''" : "%c", *s);
    if (len < size)
        snprintf(buf + len, size - len, "'");
}

/* One timed piece of work of an arm of this process. */
struct one {
    const struct arm *w;
    const struct fl_bio_job *j;
    char err[2048];
};

static int run_one(void *ctx)
{
    struct one *c = ctx;
    return c->w->a->run(c->j, c->err, sizeof c->err);
}

/* chunk samples of arm w. Returns 0, or 1 when an arm of this process
 * failed (a peer that fails is marked and left out). */
static int take(struct arm *w, const struct fl_bio_job *j, const struct opts *o,
                unsigned long chunk)
{
    if (!w->a->run) {
        char smib[24], sn[24];
        snprintf(smib, sizeof smib, "%lu", o->mib);
        snprintf(sn, sizeof sn, "%lu", chunk);
        char *argv[6];
        int k = 0;
        argv[k++] = w->prog;
        if (w->script[0])
            argv[k++] = w->script;
        argv[k++] = smib;
        argv[k++] = sn;
        argv[k++] = j->wargv[0];
        argv[k] = NULL;
        /* A capture: 2 s, and 1 s per 64 MiB (Python takes 1 GiB/s). */
        unsigned long timeout_s = fl_peer_deadline_s(chunk + 1, 2 + o->mib / 64, 0);
        if (fl_peer_collect(argv, chunk, timeout_s, w->ns, &w->got, w->version,
                            sizeof w->version, w->failed, sizeof w->failed) != 0)
            fprintf(stderr, "forkless bench io: %s: %s\n", w->a->name, w->failed);
        return 0;
    }
    for (unsigned long i = 0; i < chunk; i++) {
        struct one c = { .w = w, .j = j };
        uint64_t ns;
        if (fl_sample_upto(run_one, &c, &ns, &w->rt, parts[w->a->part].retakes) != 0) {
            fprintf(stderr, "forkless bench io: %s: %s\n", w->a->name, c.err);
            return 1;
        }
        w->ns[w->got++] = ns;
    }
    return 0;
}

/* n samples of every present arm of part p, in rounds. */
static int run_part(struct arm *arms, enum fl_bio_part p, unsigned long n,
                    unsigned long rounds, const struct fl_bio_job *j, const struct opts *o)
{
    size_t idx[fl_bio_narms], m = 0;
    for (size_t k = 0; k < fl_bio_narms; k++)
        if (arms[k].a->part == p && arms[k].present)
            idx[m++] = k;
    char err[2048];
    for (size_t k = 0; k < m; k++) {   /* warm-up, not recorded */
        const struct fl_bio_arm *a = arms[idx[k]].a;
        if (a->run && a->run(j, err, sizeof err) != 0) {
            fprintf(stderr, "forkless bench io: %s: %s\n", a->name, err);
            return 1;
        }
    }
    fprintf(stderr, "io: %s: %zu arms, %lu samples each in %lu rounds...\n",
            parts[p].name, m, n, rounds);
    size_t order[fl_bio_narms];
    uint64_t seed = 0x696f21u + (uint64_t)p;   /* repeatable */
    for (unsigned long rd = 0; rd < rounds; rd++) {
        unsigned long chunk = n / rounds + (rd < n % rounds);
        fl_interleave_order(order, m, &seed);
        for (size_t k = 0; k < m; k++) {
            struct arm *w = &arms[idx[order[k]]];
            if (!w->failed[0] && take(w, j, o, chunk) != 0)
                return 1;
        }
    }
    return 0;
}

static struct arm *arm_named(struct arm *arms, const char *name)
{
    for (size_t k = 0; k < fl_bio_narms; k++)
        if (strcmp(arms[k].a->name, name) == 0)
            return &arms[k];
    return NULL;
}

static int measured(const struct arm *w)
{
    return w && w->present && !w->failed[0] && w->s.n > 0;
}

/* The ratio of w to ref as its part shows it: of MiB/s or of time. */
static double ratio(const struct arm *w, const struct arm *ref)
{
    if (!measured(w) || !measured(ref))
        return NAN;
    double r = w->s.median_us / ref->s.median_us;
    return parts[w->a->part].rate ? 1.0 / r : r;
}

static void print_arm(const struct arm *w, const struct arm *ref, const struct opts *o)
{
    printf("io %-8s %-17s ", parts[w->a->part].name, w->a->name);
    if (!w->present || w->failed[0]) {
        printf("%s: %s\n", w->present ? "failed" : "skipped",
               w->present ? w->failed : w->skip);
        return;
    }
    if (parts[w->a->part].rate) {
        struct fl_rate r;
        fl_rate_of(&w->s, (double)o->mib, &r);
        printf("n %4zu  min %8.1f  median %8.1f  max %8.1f MiB/s  (median %8.2f ms)",
               w->s.n, r.min, r.median, r.max, w->s.median_us / 1e3);
    } else {
        printf("n %4zu  min %8.1f  median %8.1f  max %8.1f us   ", w->s.n, w->s.min_us,
               w->s.median_us, w->s.max_us);
    }
    printf("  x%.2f %s  retaken %zu%s%s\n", w->ratio, ref ? ref->a->name : "?",
           w->rt.retaken, w->version[0] ? "  " : "", w->version);
}

static void write_row(struct fl_rows *j, const struct arm *w, const struct arm *ref,
                      const struct opts *o)
{
    int ok = measured(w), rate = parts[w->a->part].rate;
    struct fl_rate r = { NAN, NAN, NAN };
    if (ok && rate)
        fl_rate_of(&w->s, (double)o->mib, &r);
    fl_rows_begin(j);
    fl_rows_str(j, "method", w->a->name);
    fl_rows_str(j, "part", parts[w->a->part].name);
    fl_rows_str(j, "status", !w->present ? "skipped" : w->failed[0] ? "failed" : "ok");
    fl_rows_str(j, "reason", !w->present ? w->skip : w->failed);
    fl_rows_str(j, "version", w->version);
    fl_rows_int(j, "mib", rate ? (long long)o->mib : 0);
    fl_rows_int(j, "n", ok ? (long long)w->s.n : 0);
    fl_rows_num(j, "min_us", ok ? w->s.min_us : NAN);
    fl_rows_num(j, "median_us", ok ? w->s.median_us : NAN);
    fl_rows_num(j, "max_us", ok ? w->s.max_us : NAN);
    fl_rows_num(j, "min_mib_s", r.min);
    fl_rows_num(j, "median_mib_s", r.median);
    fl_rows_num(j, "max_mib_s", r.max);
    fl_rows_str(j, "ratio_to", ref ? ref->a->name : "");
    fl_rows_num(j, "ratio", w->ratio);
    fl_rows_int(j, "retakes", parts[w->a->part].retakes);
    fl_rows_int(j, "retaken", (long long)w->rt.retaken);
    fl_rows_int(j, "disturbed", (long long)w->rt.disturbed);
    fl_rows_end(j);
}

static void print_goals(struct arm *arms)
{
    for (size_t g = 0; g < sizeof goals / sizeof goals[0]; g++) {
        const struct arm *w = arm_named(arms, goals[g].arm);
        const struct arm *t = arm_named(arms, goals[g].than);
        printf("goal: %s: ", goals[g].what);
        if (!w || !t) {  /* a goal names an arm the table lacks */
            printf("not measured (no arm %s)\n", w ? goals[g].than : goals[g].arm);
            continue;
        }
        double r = ratio(w, t);
        if (!isfinite(r)) {
            printf("not measured (%s %s)\n", measured(w) ? t->a->name : w->a->name,
                   (measured(w) ? t : w)->present ? "failed" : "skipped");
            continue;
        }
        int met = goals[g].op == '>' ? r >= goals[g].bound : r <= goals[g].bound;
        printf("%s x%.*f %s (%s %.2f): %s\n", w->a->name, fl_decimals_apart(r, goals[g].bound, 2), r,
               t->a->name,
               goals[g].op == '>' ? ">=" : "<=", goals[g].bound, met ? "met" : "NOT met");
    }
}

/* The job's programs, argvs and command lines. */
struct job_bufs {
    char wpath[PATH_MAX], tpath[PATH_MAX], smib[24];
    char wcmd[3 * PATH_MAX], tcmd[3 * PATH_MAX], pcmd[3 * FL_BIO_STAGES * PATH_MAX];
    char *wargv[3], *targv[2];
};

/* Finds the programs and fills the job; 0 or 1 (message printed). */
static int setup(const struct opts *o, struct job_bufs *b, struct fl_bio_job *j)
{
    if (fl_find_bench_prog("fl-writer", "FORKLESS_WRITER", FL_WRITER_PATH, b->wpath,
                           sizeof b->wpath) != 0) {
        fprintf(stderr, "forkless bench io: the fl-writer program was not found next to "
                "the forkless binary, in ../bench, in the build tree or in the install "
                "tree; build the `fl-writer` target or set FORKLESS_WRITER=PATH\n");
        return 1;
    }
    if (fl_find_tiny(b->tpath, sizeof b->tpath) != 0) {
        fprintf(stderr, "forkless bench io: the tiny program was not found; build the "
                "`tiny` target or set FORKLESS_TINY=PATH\n");
        return 1;
    }
    snprintf(b->smib, sizeof b->smib, "%lu", o->mib);
    b->wcmd[0] = b->tcmd[0] = b->pcmd[0] = '\0';
    sh_quote(b->wcmd, sizeof b->wcmd, b->wpath);
    snprintf(b->wcmd + strlen(b->wcmd), sizeof b->wcmd - strlen(b->wcmd), " %s", b->smib);
    sh_quote(b->tcmd, sizeof b->tcmd, b->tpath);
    for (int k = 0; k < FL_BIO_STAGES; k++) {
        if (k)
            snprintf(b->pcmd + strlen(b->pcmd), sizeof b->pcmd - strlen(b->pcmd), " | ");
        sh_quote(b->pcmd, sizeof b->pcmd, b->tpath);
    }
    b->wargv[0] = b->wpath;
    b->wargv[1] = b->smib;
    b->targv[0] = b->tpath;
    *j = (struct fl_bio_job){ .wargv = b->wargv, .wcmd = b->wcmd,
                              .bytes = (size_t)o->mib << 20, .targv = b->targv,
                              .tcmd = b->tcmd, .pcmd = b->pcmd };
    return 0;
}

static void find_arm(struct arm *w)
{
    const char *peer = w->a->peer;
    w->present = 1;
    if (strncmp(w->a->name, "fl", 2) == 0 || strcmp(w->a->name, "forkless") == 0)
        snprintf(w->version, sizeof w->version, "forkless %s", FL_VERSION_STRING);
    if (peer && strstr(peer, ".py"))
        w->present = fl_peer_script("python3", peer, w->prog, w->script, w->skip,
                                    sizeof w->skip);
    else if (peer)
        w->present = fl_peer_binary(peer, FL_PEER_RUST_BUILT, "rustc not found at build "
                                    "time", w->prog, w->skip, sizeof w->skip);
}

int fl_bench_io(int argc, char **argv)
{
    struct opts o;
    int r = parse(argc, argv, &o);
    if (r >= 0)
        return r;
    if ((r = fl_mem_check(SUITE, "--mib", &o.mib, 1, CAPTURE_COPIES, MEM_MARGIN_MIB)) != 0)
        return r;
    static struct job_bufs bufs;
    struct fl_bio_job job;
    if (setup(&o, &bufs, &job) != 0)
        return 1;

    struct fl_rows j;
    memset(&j, 0, sizeof j);   /* closing a writer never opened is safe */
    struct arm *arms = calloc(fl_bio_narms, sizeof *arms);
    for (size_t k = 0; arms && k < fl_bio_narms; k++) {
        arms[k].a = &fl_bio_arms[k];
        find_arm(&arms[k]);
        size_t n = arms[k].a->part == FL_BIO_CAPTURE ? o.captures : o.n;
        if (!(arms[k].ns = calloc(n, sizeof *arms[k].ns)))
            r = 1;
    }
    if (!arms || r == 1) {
        fprintf(stderr, "forkless bench io: out of memory\n");
        r = 1;
        goto out;
    }
    if ((r = fl_rows_open(&j, SUITE, o.json, o.csv)) != 0) {
        fl_rows_error(SUITE, "opening", o.json, o.csv, r);
        r = fl_rows_exit(r);
        goto out;
    }
    char machine[512];
    fl_machine_line(machine, sizeof machine);
    double load0 = fl_loadavg();
    printf("forkless bench io: %s\n", machine);
    /* A round takes a capture of each arm at least. */
    unsigned long rounds = o.rounds < o.captures ? o.rounds : o.captures;
    char cut[80] = "";
    if (rounds < o.rounds)
        snprintf(cut, sizeof cut, " (not --rounds %lu: a round takes a capture)", o.rounds);
    printf("writer %s %lu: %lu captures per arm in %lu rounds%s, never taken again when "
           "disturbed (the peers time their own); tiny %s: %lu samples per run and "
           "pipeline arm; each part interleaved in random order\n", bufs.wpath, o.mib,
           o.captures, rounds, cut, bufs.tpath, o.n);
    fl_rows_start(&j, SUITE, machine, load0);
    fl_rows_meta_str(&j, "writer", bufs.wpath);
    fl_rows_meta_str(&j, "tiny", bufs.tpath);
    fl_rows_meta_int(&j, "mib", (long long)o.mib);
    fl_rows_meta_int(&j, "capture_rounds", (long long)rounds);
    for (enum fl_bio_part p = 0; p < FL_BIO_NPARTS && r == 0; p++)
        r = run_part(arms, p, p == FL_BIO_CAPTURE ? o.captures : o.n,
                     p == FL_BIO_CAPTURE ? rounds : o.n, &job, &o);
    if (r)
        goto out;
    for (size_t k = 0; k < fl_bio_narms; k++)
        fl_summarize(arms[k].ns, arms[k].got, &arms[k].s);
    for (enum fl_bio_part p = 0; p < FL_BIO_NPARTS; p++) {
        const struct arm *ref = NULL;
        for (size_t k = 0; k < fl_bio_narms; k++)
            if (arms[k].a->part == p && arms[k].a->reference)
                ref = &arms[k];
        printf("%s: ratios of %s against %s\n", parts[p].name,
               parts[p].rate ? "MiB/s" : "time", ref ? ref->a->name : "?");
        for (size_t k = 0; k < fl_bio_narms; k++) {
            if (arms[k].a->part != p)
                continue;
            arms[k].ratio = ratio(&arms[k], ref);
            print_arm(&arms[k], ref, &o);
            write_row(&j, &arms[k], ref, &o);
        }
    }
    print_goals(arms);
    printf("load average %.2f at end\n", fl_loadavg());
out:
    for (size_t k = 0; arms && k < fl_bio_narms; k++)
        free(arms[k].ns);
    free(arms);
    int jr = fl_rows_close(&j);
    if (jr && r == 0) {
        fl_rows_error(SUITE, "writing", o.json, o.csv, jr);
        r = 1;
    }
    return r;
}
