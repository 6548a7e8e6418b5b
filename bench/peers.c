/* peers.c: the "peers" suite. The same work as forkless's, done in other
 * runtimes with their own spawn API, side by side in one run: a parent with
 * a resident heap spawns and waits for the same target n times. Each peer is
 * a small program under bench/peers/ that allocates and touches its own heap
 * in its runtime, times its spawns and prints one line per spawn. forkless
 * is a peer program too, this very one (--peer-child): in this process,
 * its spawns would run under other conditions than the peers' (just after
 * a peer's teardown, which a peer's own start-up absorbs). The peers run in
 * rounds: each round runs every peer once with a chunk of n, in a fresh
 * random order. A peer that is not installed is listed as skipped; one
 * that fails makes the verdict "no" and the run fail. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arms.h"
#include "btarget.h"
#include "forkless.h"
#include "machine.h"
#include "peerrun.h"
#include "stats.h"
#include "suite.h"

#define SUITE "peers"
#define MAX_HEAPS 8
/* 20 rounds of 20: on a VM whose speed drifts for seconds at a time, 4
 * rounds of 50 let one slow stretch fall on one peer's chunk, and moved a
 * peer's median against forkless's by 20 % from run to run. */
#define DEFAULT_N 400
#define DEFAULT_ROUNDS 20
#define PEER_UNTIMED 3       /* the spawns each peer program makes untimed */
#define MEM_MARGIN_MIB 768   /* the JVM, page tables, the rest */

#ifndef FL_PEERS_SRC_DIR
#define FL_PEERS_SRC_DIR ""
#endif
#ifndef FL_PEER_RUST_BUILT
#define FL_PEER_RUST_BUILT 0
#endif
#ifndef FL_PEER_JAVA_BUILT
#define FL_PEER_JAVA_BUILT 0
#endif
#ifndef FL_PEER_UV_BUILT
#define FL_PEER_UV_BUILT 0
#endif
#ifndef FL_PEER_GLIB_BUILT
#define FL_PEER_GLIB_BUILT 0
#endif

enum peer_kind { P_FORKLESS, P_PYTHON, P_NODE, P_RUST, P_JAVA, P_UV, P_GLIB };

struct peer_def {
    const char *name;
    const char *what;
    enum peer_kind kind;
};

static const struct peer_def peer_defs[] = {
    { "forkless", "fl_spawn() defaults + fl_wait(), from this program run as a peer\n"
      "            (forkless bench --peer-child; the reference)", P_FORKLESS },
    { "python", "python3 subprocess.run([target]) (peers/peer.py)", P_PYTHON },
    { "node", "node child_process.spawnSync(target) (peers/peer.js)", P_NODE },
    { "rust", "Rust std::process::Command::status() (peers/peer.rs, built with rustc)",
      P_RUST },
    { "java", "Java ProcessBuilder.start().waitFor() (peers/Peer.java, built with javac)",
      P_JAVA },
    { "libuv", "libuv uv_spawn() + uv_run() (peers/peer_uv.c, needs libuv1-dev)", P_UV },
    { "glib", "GLib g_spawn_sync() (peers/peer_glib.c, needs libglib2.0-dev)", P_GLIB },
};
#define NPEERS (sizeof peer_defs / sizeof peer_defs[0])

struct opts {
    unsigned long heaps[MAX_HEAPS];
    int heaps_given;   /* else the defaults: those that do not fit are left out */
    size_t nheaps;
    const char *target;
    unsigned long n;
    unsigned long rounds;
    int want[NPEERS];
    const char *json;
    const char *csv;
};

void fl_bench_peers_usage(FILE *f)
{
    fprintf(f,
        "usage: forkless bench peers [OPTIONS]\n\n"
        "Spawn+wait TARGET n times from a parent holding a resident heap, in\n"
        "other runtimes with their own spawn API and with forkless, in one run.\n"
        "Each peer is a program that allocates and touches its own heap, makes\n"
        "3 spawns untimed, then times its spawns (its start-up is not timed);\n"
        "forkless's is this program. The peers run in rounds, each round every\n"
        "peer once with a chunk of n, in a fresh random order.\n"
        "It prints min/median/max us per spawn, each peer's median against\n"
        "forkless's, and the runtimes' versions. A peer whose runtime is\n"
        "missing, or that was not built, is listed as skipped with the reason;\n"
        "one that fails is listed as failed, the verdict is no, and the run\n"
        "exits 1.\n\n"
        "Options:\n"
        "  --heap LIST     heap sizes in MiB, comma separated, at most %d, each at\n"
        "                  most %lu (default 0,1024); one larger than the free\n"
        "                  memory is refused (of the defaults: left out, saying so)\n"
        "  --target T      PATH of the program to start, a name in $PATH, or\n"
        "                  \"tiny\" (the bench's static program; default /bin/true)\n"
        "  -n N            spawns per peer per heap (default %d)\n"
        "  --rounds R      rounds n is split into (default %d)\n"
        "  --quick         small counts: -n 20 --rounds 2 (each unless given)\n"
        "  --peers LIST    the peers to run, comma separated (default: all)\n"
        "  --json FILE     also write the rows as JSON\n"
        "  --csv FILE      also write the rows as CSV (a header line, then one\n"
        "                  line per row)\n"
        "  -h, --help      this text\n\n"
        "A peer still running at its deadline (%lu s and more, scaled to its\n"
        "spawns and heap; FORKLESS_PEER_TIMEOUT=SECONDS sets another) is killed\n"
        "and has failed.\n\n"
        "Peers (sources in %s; set FORKLESS_PEERS_SRC and FORKLESS_PEERS_BIN to\n"
        "use others):\n", MAX_HEAPS, FL_MAX_HEAP_MIB, DEFAULT_N, DEFAULT_ROUNDS,
        FL_PEER_START_S,
        FL_PEERS_SRC_DIR[0] ? FL_PEERS_SRC_DIR : "bench/peers");
    for (size_t i = 0; i < NPEERS; i++)
        fprintf(f, "  %-9s %s\n", peer_defs[i].name, peer_defs[i].what);
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .heaps = { 0, 1024 }, .nheaps = 2, .target = "/bin/true",
                        .n = DEFAULT_N, .rounds = DEFAULT_ROUNDS };
    for (size_t p = 0; p < NPEERS; p++)
        o->want[p] = 1;
    if (fl_opt_quick(argc, argv)) {
        o->n = 20;
        o->rounds = 2;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m;
        if ((m = fl_opt_common(SUITE, argc, argv, &i, fl_bench_peers_usage, &o->csv, &o->json))) {
            if (m != 1)
                return m < 0 ? 2 : 0;
            continue;
        }
        if ((m = fl_opt_value(SUITE, argc, argv, &i, "--heap", &v))) {
            if (m < 0)
                return 2;
            if (fl_opt_heaps(SUITE, v, o->heaps, MAX_HEAPS, &o->nheaps) != 0)
                return 2;
            o->heaps_given = 1;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--target", &v))) {
            if (m < 0)
                return 2;
            o->target = v;
        } else if ((m = fl_opt_ulong(SUITE, argc, argv, &i, "-n", 1, 1000000, &o->n))) {
            if (m < 0)
                return 2;
        } else if ((m = fl_opt_ulong(SUITE, argc, argv, &i, "--rounds", 1, 1000,
                                     &o->rounds))) {
            if (m < 0)
                return 2;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--peers", &v))) {
            if (m < 0)
                return 2;
            memset(o->want, 0, sizeof o->want);
            o->want[0] = 1;   /* forkless is always the reference */
            bool given[NPEERS] = { false };
            const char *p = v;
            for (;;) {
                const char *end = strchr(p, ',');
                size_t len = end ? (size_t)(end - p) : strlen(p);
                size_t k = NPEERS;
                for (size_t q = 0; q < NPEERS; q++)
                    if (strlen(peer_defs[q].name) == len &&
                        memcmp(peer_defs[q].name, p, len) == 0)
                        k = q;
                if (k == NPEERS)
                    return fl_usage_error(SUITE, "--peers: unknown peer \"%.*s\"",
                                          (int)len, p);
                if (given[k])
                    return fl_usage_error(SUITE, "--peers: peer \"%s\" given twice",
                                          peer_defs[k].name);
                given[k] = true;
                o->want[k] = 1;
                if (!end)
                    break;
                p = end + 1;
            }
        } else {
            return fl_usage_error(SUITE, "unknown option \"%s\"", a);
        }
    }
    return -1;   /* go on */
}

/* ---- finding the peers -------------------------------------------------- */

struct peer {
    const struct peer_def *def;
    int present;
    char skip[256];          /* why it is not present */
    char failed[512];        /* why it failed during the run, or "" */
    int ever_failed;         /* at some heap: the verdict is "no" */
    char prog[PATH_MAX];     /* the runtime or the binary */
    char script[PATH_MAX];   /* the script, the class dir, or "" */
    char version[256];
    uint64_t *samples;       /* ns, n per heap */
    size_t got;
};

/* snprintf into a message buffer: truncation of a long path is fine. */
__attribute__((format(printf, 3, 4)))
static void set_msg(char *dst, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, size, fmt, ap);
    va_end(ap);
}

static void find_peer(struct peer *p)
{
    const char *bin = fl_peers_bin_dir();
    p->present = 0;
    switch (p->def->kind) {
    case P_FORKLESS:
        /* This very file, even if replaced or removed since it started. */
        set_msg(p->prog, sizeof p->prog, "/proc/self/exe");
        p->present = access(p->prog, X_OK) == 0;
        if (!p->present)
            set_msg(p->skip, sizeof p->skip, "this program cannot be run again (%s: %s)",
                    p->prog, strerror(errno));
        set_msg(p->version, sizeof p->version, "forkless %s", FL_VERSION_STRING);
        return;
    case P_PYTHON:
        p->present = fl_peer_script("python3", "peer.py", p->prog, p->script, p->skip,
                                    sizeof p->skip);
        return;
    case P_NODE:
        p->present = fl_peer_script("node", "peer.js", p->prog, p->script, p->skip,
                                    sizeof p->skip);
        return;
    case P_JAVA:
        set_msg(p->script, sizeof p->script, "%s", bin);
        {
            char cls[PATH_MAX];
            snprintf(cls, sizeof cls, "%s/Peer.class", bin);
            if (!fl_is_file(cls))
                set_msg(p->skip, sizeof p->skip, FL_PEER_JAVA_BUILT ?
                         "%s not built (build the peer_java target)" :
                         "javac not found at build time (%s not built)", cls);
            else if (fl_peer_find_prog("java", p->prog, sizeof p->prog) != 0)
                set_msg(p->skip, sizeof p->skip, "java not found");
            else
                p->present = 1;
        }
        return;
    case P_RUST:
        p->present = fl_peer_binary("peer_rust", FL_PEER_RUST_BUILT,
                                    "rustc not found at build time", p->prog, p->skip,
                                    sizeof p->skip);
        return;
    case P_UV:
        p->present = fl_peer_binary("peer_uv", FL_PEER_UV_BUILT,
                                    "libuv-dev not installed (pkg-config found no libuv "
                                    "at build time)", p->prog, p->skip, sizeof p->skip);
        return;
    case P_GLIB:
        p->present = fl_peer_binary("peer_glib", FL_PEER_GLIB_BUILT,
                                    "libglib2.0-dev not installed (pkg-config found no "
                                    "glib-2.0 at build time)", p->prog, p->skip,
                                    sizeof p->skip);
        return;
    }
}

/* ---- running a peer ----------------------------------------------------- */

/* Runs the peer for a chunk of spawns at heap mib; appends its samples.
 * Returns 0, or 1 with p->failed set. */
static int run_peer(struct peer *p, unsigned long mib, unsigned long chunk,
                    const char *target)
{
    char smib[32], sn[32], xms[48], xmx[48], ncpu[48];
    snprintf(smib, sizeof smib, "%lu", mib);
    snprintf(sn, sizeof sn, "%lu", chunk);
    /* The JVM's heap at its full size from the start (only reserved: its
     * pages are touched as used): one that grows as the arrays come leaves
     * them, each in one piece of regions, no room (OutOfMemoryError, now
     * and then, at 4 GiB). */
    snprintf(xms, sizeof xms, "-Xms%lum", mib + 512);
    snprintf(xmx, sizeof xmx, "-Xmx%lum", mib + 512);
    /* Pinned to one CPU (cpu.h), the JVM would size itself for one: the
     * serial collector, whose old generation cannot hold a 1 GiB array in
     * a 1.5 GiB heap. It is told the machine's CPU count instead. */
    snprintf(ncpu, sizeof ncpu, "-XX:ActiveProcessorCount=%ld",
             sysconf(_SC_NPROCESSORS_ONLN));
    char *argv[12];
    int k = 0;
    argv[k++] = p->prog;
    if (p->def->kind == P_FORKLESS) {
        argv[k++] = "bench";
        argv[k++] = "--peer-child";
    }
    if (p->def->kind == P_PYTHON || p->def->kind == P_NODE)
        argv[k++] = p->script;
    if (p->def->kind == P_JAVA) {
        argv[k++] = xms;
        argv[k++] = xmx;
        argv[k++] = ncpu;
        argv[k++] = "-cp";
        argv[k++] = p->script;
        argv[k++] = "Peer";
    }
    argv[k++] = smib;
    argv[k++] = sn;
    argv[k++] = (char *)target;
    argv[k] = NULL;
    /* A spawn: 2 s, and 1 s per GiB of heap (Node's forks take 0.8 s at
     * 4 GiB on a busy 2-CPU machine); touching the heap: 1 s per 64 MiB. */
    unsigned long timeout_s = fl_peer_deadline_s(chunk + PEER_UNTIMED, 2 + mib / 1024,
                                                 mib / 64);
    return fl_peer_collect(argv, chunk, timeout_s, p->samples, &p->got, p->version,
                           sizeof p->version, p->failed, sizeof p->failed);
}

/* ---- forkless as a peer ------------------------------------------------- */

/* `forkless bench --peer-child HEAP_MIB N TARGET`: what every program in
 * bench/peers/ does, with fl_spawn() (defaults) and fl_wait(): a heap of
 * HEAP_MIB MiB mapped and touched, 3 spawns of TARGET (a path) untimed,
 * then N timed; prints "# version forkless X", then one line per timed
 * spawn, its microseconds. */
int fl_bench_peer_child(int argc, char **argv)
{
    unsigned long mib, n;
    if (argc != 4 || fl_parse_ulong(argv[1], 0, FL_MAX_HEAP_MIB, &mib) != 0 ||
        fl_parse_ulong(argv[2], 1, 1000000, &n) != 0) {
        fprintf(stderr, "usage: forkless bench --peer-child HEAP_MIB N TARGET\n");
        return 2;
    }
    struct fl_heap heap;
    int e = fl_heap_alloc(&heap, mib, FL_PAGES_4K);
    if (e) {
        fprintf(stderr, "forkless bench --peer-child: mmap %lu MiB: %s\n", mib, strerror(e));
        return 1;
    }
    char *targv[] = { argv[3], NULL };
    struct fl_arm_target t = { argv[3], targv };
    const struct fl_arm *arm = fl_arm_find("forkless");
    uint64_t *ns = calloc(n, sizeof *ns);
    int r = !arm || !ns;
    char err[2048] = "out of memory";
    for (unsigned long i = 0; !r && i < PEER_UNTIMED + n; i++) {
        uint64_t t0 = fl_bench_now_ns();
        r = arm->run(&t, err, sizeof err);
        if (i >= PEER_UNTIMED)
            ns[i - PEER_UNTIMED] = fl_bench_now_ns() - t0;
    }
    if (r) {
        fprintf(stderr, "forkless bench --peer-child: %s\n", err);
    } else {
        printf("# version forkless %s\n", fl_version());
        for (unsigned long i = 0; i < n; i++)
            printf("%.3f\n", (double)ns[i] / 1e3);
    }
    free(ns);
    fl_heap_free(&heap);
    return r ? 1 : 0;
}

/* ---- the suite ---------------------------------------------------------- */

/* The verdict. A peer that was asked for and failed makes it "no" and the
 * run fail: forkless was not compared with it, and a skipped row would
 * hide a broken peer (one not installed is skipped, which is no failure).
 * Returns 0, or 1 when a peer failed. */
static int print_verdict(const struct peer *peers, size_t np, int compared,
                         int all_faster)
{
    char failed[256] = "";
    for (size_t i = 0; i < np; i++)
        if (peers[i].ever_failed)
            set_msg(failed + strlen(failed), sizeof failed - strlen(failed), "%s%s",
                    failed[0] ? ", " : "", peers[i].def->name);
    if (!compared && !failed[0]) {
        printf("no peer ran: nothing to compare forkless with\n");
        return 0;
    }
    printf("forkless faster (median) than every present peer at every heap: ");
    if (failed[0])
        printf("no (%s failed)\n", failed);
    else
        printf("%s\n", all_faster ? "yes" : "no");
    return failed[0] != '\0';
}

struct row {
    const char *method;
    unsigned long heap_mib;
    const char *status;      /* "ok", "skipped" or "failed" */
    const char *reason;
    const char *version;
    struct fl_summary s;
    double ratio;            /* median / forkless median */
};

static void write_rows(struct fl_rows *j, const struct row *rows, size_t nrows,
                       const char *tname)
{
    for (size_t i = 0; i < nrows; i++) {
        const struct row *w = &rows[i];
        int ok = strcmp(w->status, "ok") == 0;
        fl_rows_begin(j);
        fl_rows_str(j, "method", w->method);
        fl_rows_int(j, "heap_mib", (long long)w->heap_mib);
        fl_rows_str(j, "target", tname);
        fl_rows_str(j, "status", w->status);
        fl_rows_str(j, "reason", w->reason);
        fl_rows_str(j, "version", w->version);
        fl_rows_int(j, "n", (long long)w->s.n);
        fl_rows_num(j, "min_us", ok ? w->s.min_us : NAN);
        fl_rows_num(j, "median_us", ok ? w->s.median_us : NAN);
        fl_rows_num(j, "max_us", ok ? w->s.max_us : NAN);
        fl_rows_num(j, "ratio_forkless", ok ? w->ratio : NAN);
        fl_rows_end(j);
    }
}

int fl_bench_peers(int argc, char **argv)
{
    struct opts o;
    int r = parse(argc, argv, &o);
    if (r >= 0)
        return r;

    /* One peer's heap at a time. */
    if (!o.heaps_given)
        fl_mem_fit_defaults(SUITE, "--heap", o.heaps, &o.nheaps, 1, MEM_MARGIN_MIB);
    if ((r = fl_mem_check(SUITE, "--heap", o.heaps, o.nheaps, 1, MEM_MARGIN_MIB)) != 0)
        return r;

    char path[PATH_MAX];
    int is_tiny;
    if ((r = fl_bench_target(SUITE, o.target, path, sizeof path, &is_tiny)) != 0)
        return r;
    const char *tname = is_tiny ? "tiny" : path;
    unsigned long rounds = o.rounds < o.n ? o.rounds : o.n;

    struct peer peers[NPEERS];
    size_t np = 0;
    memset(peers, 0, sizeof peers);
    for (size_t q = 0; q < NPEERS; q++) {
        if (!o.want[q])
            continue;
        peers[np].def = &peer_defs[q];
        find_peer(&peers[np]);
        np++;
    }
    /* The reference: without it no peer is compared with anything. */
    if (!peers[0].present) {
        fprintf(stderr, "forkless bench peers: forkless: %s\n", peers[0].skip);
        return 1;
    }
    struct row *rows = calloc(np * o.nheaps, sizeof *rows);
    for (size_t i = 0; i < np; i++)
        peers[i].samples = calloc(o.n, sizeof *peers[i].samples);
    struct fl_rows j;
    memset(&j, 0, sizeof j);   /* closing a writer never opened is safe */
    int oom = !rows;
    for (size_t i = 0; i < np; i++)
        oom |= !peers[i].samples;
    if (oom) {
        fprintf(stderr, "forkless bench peers: out of memory\n");
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
    printf("forkless bench peers: %s\n", machine);
    printf("target %s%s%s; %lu spawn+wait per peer per heap in %lu rounds "
           "(each round every peer once, random order); each peer, forkless "
           "too, allocates and touches its own heap and makes %d spawns untimed "
           "first; times in us per spawn+wait\n", tname, is_tiny ? " = " : "",
           is_tiny ? path : "", o.n, rounds, PEER_UNTIMED);
    fl_rows_start(&j, SUITE, machine, load0);
    fl_rows_meta_str(&j, "target", tname);
    fl_rows_meta_str(&j, "target_path", path);
    fl_rows_meta_int(&j, "rounds", (long long)rounds);

    int all_faster = 1, compared = 0;
    uint64_t seed = 0x7065657273212121u;   /* repeatable */
    for (size_t h = 0; h < o.nheaps && r == 0; h++) {
        unsigned long mib = o.heaps[h];
        for (size_t i = 0; i < np; i++) {
            peers[i].got = 0;
            peers[i].failed[0] = '\0';
        }
        for (unsigned long rd = 0; rd < rounds && r == 0; rd++) {
            unsigned long chunk = o.n / rounds + (rd < o.n % rounds);
            size_t order[NPEERS];
            fl_interleave_order(order, np, &seed);
            for (size_t x = 0; x < np && r == 0; x++) {
                struct peer *p = &peers[order[x]];
                if (!p->present || p->failed[0])
                    continue;
                fprintf(stderr, "peers: heap %lu MiB: round %lu/%lu: %s\n", mib,
                        rd + 1, rounds, p->def->name);
                if (run_peer(p, mib, chunk, path) != 0) {
                    fprintf(stderr, "forkless bench peers: %s: %s\n", p->def->name,
                            p->failed);
                    r = p->def->kind == P_FORKLESS;  /* no reference left to compare with */
                }
            }
        }
        if (r)
            break;
        struct row *fr = NULL;
        for (size_t i = 0; i < np; i++) {
            struct peer *p = &peers[i];
            struct row *w = &rows[h * np + i];
            *w = (struct row){ .method = p->def->name, .heap_mib = mib,
                               .version = p->version };
            if (!p->present) {
                w->status = "skipped";
                w->reason = p->skip;
            } else if (p->failed[0]) {
                w->status = "failed";
                w->reason = p->failed;
                p->ever_failed = 1;
            } else {
                w->status = "ok";
                w->reason = "";
                fl_summarize(p->samples, p->got, &w->s);
            }
            if (p->def->kind == P_FORKLESS && strcmp(w->status, "ok") == 0)
                fr = w;
        }
        for (size_t i = 0; i < np; i++) {
            struct row *w = &rows[h * np + i];
            printf("peers heap %5lu MiB  %-9s ", mib, w->method);
            if (strcmp(w->status, "ok") != 0) {
                printf("%s: %s\n", w->status, w->reason);
                continue;
            }
            w->ratio = fr ? w->s.median_us / fr->s.median_us : NAN;
            printf("n %4zu  min %8.1f  median %8.1f  max %9.1f us   x%5.*f forkless"
                   "   %s\n", w->s.n, w->s.min_us, w->s.median_us, w->s.max_us,
                   w != fr ? fl_decimals_apart(w->ratio, 1.0, 2) : 2, w->ratio, w->version);
            if (w != fr && fr) {
                compared++;
                if (!(w->ratio > 1.0))
                    all_faster = 0;
            }
        }
        fflush(stdout);
    }
    if (r == 0) {
        write_rows(&j, rows, np * o.nheaps, tname);
        printf("peer versions:");
        for (size_t i = 0; i < np; i++)
            printf("%s %s: %s", i ? ";" : "", peers[i].def->name,
                   peers[i].present ? (peers[i].version[0] ? peers[i].version : "?")
                                    : "skipped");
        putchar('\n');
        r = print_verdict(peers, np, compared, all_faster);
        printf("load average %.2f at end\n", fl_loadavg());
    }
out:
    for (size_t i = 0; i < np; i++)
        free(peers[i].samples);
    free(rows);
    int jr = fl_rows_close(&j);
    if (jr && r == 0) {
        fl_rows_error(SUITE, "writing", o.json, o.csv, jr);
        r = 1;
    }
    return r;
}
