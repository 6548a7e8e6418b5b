/* stats.h: timing, sample summaries, interleaving and the JSON/CSV row
 * writer (struct fl_rows, below), shared by every bench suite. */
#ifndef FL_BENCH_STATS_H
#define FL_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t fl_bench_now_ns(void);

/* CPU time (user + system) of this process and of its reaped children. */
uint64_t fl_own_cpu_ns(void);

/* A timed span and what else used the CPU meanwhile: its wall time less the
 * CPU time of this process and of the children it reaped in between. On a
 * pinned CPU (cpu.h) that never idles while a child starts and exits, the
 * rest went to other tasks, interrupts or steal. */
struct fl_span {
    uint64_t t0, cpu0;
};
void fl_span_begin(struct fl_span *s);
/* Ends the span: returns its wall time, and in *others_ns what else ran
 * (0 when the bench is not pinned: then a child's time on another CPU and
 * the idle waits for it are the spawn's own). */
uint64_t fl_span_end(const struct fl_span *s, uint64_t *others_ns);

/* A span is disturbed when something else took more than
 * FL_DISTURBED_NS and FL_DISTURBED_PCT % of it. Undisturbed spawns of the
 * heap suite show under 4 us; a preempted one, hundreds of us or more. */
#define FL_DISTURBED_NS 20000u
#define FL_DISTURBED_PCT 1u
int fl_span_disturbed(uint64_t ns, uint64_t others_ns);

/* How often samples were taken again (see fl_sample). */
struct fl_retakes {
    size_t retaken;     /* disturbed tries thrown away */
    size_t disturbed;   /* samples kept although disturbed (out of tries) */
};

/* Takes one sample: runs fn(ctx) in a span, and again while the span was
 * disturbed, at most FL_RETAKES more times. Returns fn's first non-zero
 * status, or 0 with *ns the time of the last try. */
#define FL_RETAKES 2
int fl_sample(int (*fn)(void *ctx), void *ctx, uint64_t *ns, struct fl_retakes *rt);
/* fl_sample taken again at most `retakes` times (0: never; a disturbed
 * sample then counts as kept disturbed). */
int fl_sample_upto(int (*fn)(void *ctx), void *ctx, uint64_t *ns, struct fl_retakes *rt,
                   int retakes);

/* min / median / max of a set of samples, in microseconds. */
struct fl_summary {
    size_t n;
    double min_us;
    double median_us;
    double max_us;
};

/* Summarises n samples (nanoseconds). Sorts the array in place. n may be 0:
 * every field is then 0. */
void fl_summarize(uint64_t *ns, size_t n, struct fl_summary *out);

/* A summary of times as a rate: `units` (bytes, MiB, ...) done in each
 * sample, per second. min is the rate of the slowest sample (max_us),
 * median units / median_us, max that of the fastest (min_us). 0 for n 0. */
struct fl_rate {
    double min, median, max;
};
void fl_rate_of(const struct fl_summary *s, double units, struct fl_rate *out);

/* Interleaving: in round i of `rounds`, should an arm that takes only
 * `want` samples (want <= rounds) take one? Spreads the samples evenly over
 * the rounds, so an arm with fewer samples still sees the same conditions
 * as the others. */
int fl_interleave_take(size_t i, size_t rounds, size_t want);

/* Interleaving: the order of the arms in one round, a fresh random
 * permutation of 0..narms-1 each round (Fisher-Yates, from *seed, which it
 * advances). A fixed or merely rotated order would make one arm always run
 * right after another, and some arms leave work behind for the next spawn
 * (after fork_exec the parent takes copy-on-write faults on its stack and
 * data), so every arm gets each neighbour equally often instead. */
void fl_interleave_order(size_t *order, size_t narms, uint64_t *seed);

/* An output file written whole when the run ends: a run that is
 * interrupted leaves the file as it was. The file is opened at
 * once (created where missing, not emptied), so a path that cannot be
 * written is said before the run; the text gathers in memory (f). */
struct fl_held {
    FILE *f;        /* NULL: not open */
    int fd;
    char *buf;
    size_t len;
    const char *path;
    int created;    /* made by fl_held_open: removed again when discarded */
};

/* Returns 0 or an errno value; on failure nothing is left open. */
int fl_held_open(struct fl_held *h, const char *path);
/* Empties the file (a regular one) and writes what f gathered; or, with
 * discard, leaves it as it was (removes it if fl_held_open made it).
 * Closes everything. Returns 0 or the first errno value. */
int fl_held_close(struct fl_held *h, int discard);

/* A minimal JSON writer for {"suite": ..., <header fields>, "rows": [...]}
 * (suites use struct fl_rows below, which writes JSON through it and CSV):
 *
 *     struct fl_json j;
 *     fl_json_open(&j, path, "heap");      header fields: fl_json_str...
 *     fl_json_rows(&j);
 *     fl_json_row(&j); fl_json_str(&j, "method", "forkless"); ...
 *     fl_json_close(&j);
 *
 * Every call is a no-op on a writer whose open failed or that was never
 * opened (f == NULL), so a suite can call them unconditionally. */
struct fl_json {
    struct fl_held out;
    FILE *f;        /* out.f while open */
    int depth;      /* 1: top object, 2: inside a row */
    int first;      /* no member written yet at this level */
    int first_row;
    int in_rows;
};

/* Opens path and starts the top object with "suite". Returns 0 or an errno
 * value. A NULL path leaves j closed (every call a no-op) and returns 0. */
int fl_json_open(struct fl_json *j, const char *path, const char *suite);
/* Starts the "rows" array; later members go to rows. */
void fl_json_rows(struct fl_json *j);
/* Starts a new row object (ending the previous one). */
void fl_json_row(struct fl_json *j);
void fl_json_str(struct fl_json *j, const char *key, const char *val);
void fl_json_num(struct fl_json *j, const char *key, double val);  /* NaN -> null */
void fl_json_int(struct fl_json *j, const char *key, long long val);
/* Ends everything and closes the file. Returns 0 or an errno value. */
int fl_json_close(struct fl_json *j);

/* ---- Rows: one writer for --json FILE and --csv FILE ----------------------
 *
 * Every suite reports its results as rows, one per arm (method) and
 * condition (heap size, thread count, ...). One struct fl_rows writes the
 * same row records to both files, either of which may be absent:
 *
 *     struct fl_rows w;
 *     if ((e = fl_rows_open(&w, "heap", o.json, o.csv)) != 0) ...;  errno
 *     fl_rows_meta_str(&w, "machine", machine);   header: JSON only, and
 *     fl_rows_meta_num(&w, "loadavg_start", l);   only before the first row
 *     for each arm and condition:
 *         fl_rows_begin(&w);
 *         fl_rows_str(&w, "method", arm->name);   always give "method"
 *         fl_rows_int(&w, "heap_mib", 1024);
 *         fl_rows_num(&w, "median_us", med);
 *         fl_rows_end(&w);
 *     if ((e = fl_rows_close(&w)) != 0) ...;      errno (EINVAL: see below)
 *
 * JSON:  {"suite": NAME, <meta fields>, "rows": [{"suite": NAME, ...}, ...]}
 * CSV:   a header line with the keys of the first row, then one line per
 *        row, values in the same order (RFC 4180 quoting where needed).
 *        No meta fields: put what a plot needs (reserve_gib, pages, ...) in
 *        the rows themselves.
 * Every row starts with the field "suite" (added by fl_rows_begin), and
 * every row must then give the same keys in the same order as the first
 * (a CSV needs one header); a row that does not is written to the JSON,
 * left out of the CSV, and makes fl_rows_close return EINVAL with a message
 * on stderr. Numbers (fl_rows_num) are written with 3 decimals; NaN or
 * infinity becomes null in the JSON and an empty cell in the CSV.
 * At most FL_ROWS_MAX_FIELDS fields per row (more are dropped, EINVAL).
 * A writer with both paths NULL does nothing, so a suite calls it
 * unconditionally. Column names the plots (bench/plot) read:
 *   heap:    method, heap_mib, median_us           (+ pages, reserve_gib)
 *   threads: method, threads, median_spawns_per_s
 *   peers:   method, heap_mib, median_us
 */
#define FL_ROWS_MAX_FIELDS 48

enum fl_kind { FL_KIND_STR, FL_KIND_INT, FL_KIND_NUM };

struct fl_field {
    char *key;          /* owned copies */
    char *val;          /* formatted; NULL for null */
    enum fl_kind kind;
};

struct fl_rows {
    const char *suite;
    const char *csv_path;
    struct fl_json json;
    struct fl_held csv_out;
    FILE *csv;      /* csv_out.f while open */
    char *cols[FL_ROWS_MAX_FIELDS];  /* the CSV header, from the first row */
    size_t ncols;
    struct fl_field cur[FL_ROWS_MAX_FIELDS];
    size_t ncur;
    int in_row;
    size_t nrows;
    int err;             /* first error: errno value, or EINVAL */
};

/* Decimals that keep a ratio from reading x0.00: two, or as many as a
 * ratio under 0.1 needs for two significant digits (up to 6). For
 * printf("x%.*f", fl_ratio_decimals(x), x). */
int fl_ratio_decimals(double x);

/* Decimals, from d up to 6, with which x prints apart from bound: a goal
 * decided on x then reads the same from the figure printed (0.3004 is not
 * <= 0.30, and prints x0.3004, not x0.30). d where x equals bound. */
int fl_decimals_apart(double x, double bound, int d);

/* Opens json_path and/or csv_path (either may be NULL) for suite NAME.
 * Neither is emptied or written before fl_rows_close (see struct
 * fl_held). Returns 0, or with the option and the reason said on stderr
 * -1 (a path that cannot be written) or FL_ROWS_SAME_FILE (both name one
 * file: a usage error); on failure nothing is left open. fl_rows_exit()
 * turns either into the suite's exit status. */
#define FL_ROWS_SAME_FILE (-2)
static inline int fl_rows_exit(int r)
{
    return r == FL_ROWS_SAME_FILE ? 2 : 1;
}
int fl_rows_open(struct fl_rows *w, const char *suite, const char *json_path,
                 const char *csv_path);
/* Header fields (JSON top level); ignored after the first row. */
void fl_rows_meta_str(struct fl_rows *w, const char *key, const char *val);
void fl_rows_meta_num(struct fl_rows *w, const char *key, double val);
void fl_rows_meta_int(struct fl_rows *w, const char *key, long long val);
/* Starts a row (ending an unfinished one) with "suite" = NAME. */
void fl_rows_begin(struct fl_rows *w);
void fl_rows_str(struct fl_rows *w, const char *key, const char *val); /* NULL: null */
void fl_rows_int(struct fl_rows *w, const char *key, long long val);
void fl_rows_num(struct fl_rows *w, const char *key, double val);
/* Writes the row to both files. */
void fl_rows_end(struct fl_rows *w);
/* Ends the files, writes them and closes them; a run that ends before its
 * first row (it failed) leaves them as they were. Returns 0 or the first
 * error (an errno value); safe on a writer that never opened anything. */
int fl_rows_close(struct fl_rows *w);

/* The common start of a run: prints "load average L at start" (L is load0,
 * from fl_loadavg) and the CPU the suite is pinned to, a warning on stderr
 * when the machine looks busy, and puts "machine", "loadavg_start" and
 * "cpu" (-1: not pinned) in the header of w. */
void fl_rows_start(struct fl_rows *w, const char *suite, const char *machine,
                   double load0);

/* Prints "forkless bench SUITE: DOING JSON / CSV: strerror(e)" on stderr,
 * for a failed fl_rows_open or fl_rows_close (json or csv may be NULL);
 * nothing for e -1, which fl_rows_open has explained. */
void fl_rows_error(const char *suite, const char *doing, const char *json,
                   const char *csv, int e);

#endif
