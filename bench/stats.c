/* stats.c: see stats.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stats.h"

#include "cpu.h"
#include "machine.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uint64_t fl_bench_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t fl_own_cpu_ns(void)
{
    struct timespec t = { 0, 0 };
    struct rusage c;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    uint64_t ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    if (getrusage(RUSAGE_CHILDREN, &c) == 0)
        ns += ((uint64_t)c.ru_utime.tv_sec + (uint64_t)c.ru_stime.tv_sec) * 1000000000u +
              ((uint64_t)c.ru_utime.tv_usec + (uint64_t)c.ru_stime.tv_usec) * 1000u;
    return ns;
}

void fl_span_begin(struct fl_span *s)
{
    s->cpu0 = fl_own_cpu_ns();
    s->t0 = fl_bench_now_ns();
}

uint64_t fl_span_end(const struct fl_span *s, uint64_t *others_ns)
{
    uint64_t t1 = fl_bench_now_ns();
    uint64_t ns = t1 - s->t0;
    uint64_t cpu = fl_own_cpu_ns() - s->cpu0;
    *others_ns = fl_cpu_pinned() >= 0 && ns > cpu ? ns - cpu : 0;
    return ns;
}

int fl_span_disturbed(uint64_t ns, uint64_t others_ns)
{
    return others_ns > FL_DISTURBED_NS && others_ns * 100u > ns * FL_DISTURBED_PCT;
}

int fl_sample(int (*fn)(void *ctx), void *ctx, uint64_t *ns, struct fl_retakes *rt)
{
    return fl_sample_upto(fn, ctx, ns, rt, FL_RETAKES);
}

int fl_sample_upto(int (*fn)(void *ctx), void *ctx, uint64_t *ns, struct fl_retakes *rt,
                   int retakes)
{
    for (int try = 0;; try++) {
        struct fl_span s;
        uint64_t others;
        fl_span_begin(&s);
        int r = fn(ctx);
        *ns = fl_span_end(&s, &others);
        if (r)
            return r;
        if (!fl_span_disturbed(*ns, others))
            return 0;
        if (try >= retakes) {
            rt->disturbed++;
            return 0;
        }
        rt->retaken++;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void fl_summarize(uint64_t *ns, size_t n, struct fl_summary *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n == 0)
        return;
    qsort(ns, n, sizeof *ns, cmp_u64);
    double med = (n % 2) ? (double)ns[n / 2]
                         : ((double)ns[n / 2 - 1] + (double)ns[n / 2]) / 2.0;
    out->min_us = (double)ns[0] / 1e3;
    out->median_us = med / 1e3;
    out->max_us = (double)ns[n - 1] / 1e3;
}

static double per_second(double units, double us)
{
    return us > 0 ? units * 1e6 / us : 0;
}

void fl_rate_of(const struct fl_summary *s, double units, struct fl_rate *out)
{
    out->min = per_second(units, s->max_us);
    out->median = per_second(units, s->median_us);
    out->max = per_second(units, s->min_us);
}

int fl_interleave_take(size_t i, size_t rounds, size_t want)
{
    if (want >= rounds)
        return 1;
    /* Take a sample when floor(i * want / rounds) steps up. */
    return (i + 1) * want / rounds != i * want / rounds;
}

static uint64_t next_random(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

void fl_interleave_order(size_t *order, size_t narms, uint64_t *seed)
{
    for (size_t k = 0; k < narms; k++)
        order[k] = k;
    for (size_t k = narms; k > 1; k--) {
        size_t r = (size_t)(next_random(seed) % k);
        size_t tmp = order[k - 1];
        order[k - 1] = order[r];
        order[r] = tmp;
    }
}

int fl_ratio_decimals(double x)
{
    int d = 2;
    double lim = 0.1;
    while (d < 6 && isfinite(x) && x > 0 && x < lim) {
        d++;
        lim /= 10;
    }
    return d;
}

int fl_decimals_apart(double x, double bound, int d)
{
    char a[64], b[64];
    for (; d < 6 && isfinite(x) && x != bound; d++) {
        snprintf(a, sizeof a, "%.*f", d, x);
        snprintf(b, sizeof b, "%.*f", d, bound);
        if (strcmp(a, b) != 0)
            break;
    }
    return d;
}

/* ---- Output files ------------------------------------------------------ */

/* The stream's first write error: stdio keeps only that there was one, so
 * the rest of the buffer is written once more to learn its errno. */
static int stream_error(FILE *f)
{
    if (fflush(f) != 0)
        return errno;
    return ferror(f) ? EIO : 0;
}

/* Files made by fl_held_open() and not yet closed: a run ended by a
 * signal from the terminal or a supervisor removes them, as a discard
 * does, rather than leave an empty .json that no reader can parse. The
 * handler makes only async-signal-safe calls (fstat, stat, unlink). */
#define HELD_MAX 8
static struct fl_held *volatile held_made[HELD_MAX];
static pid_t held_owner;  /* a fork() child of a suite's arm removes nothing */

/* Still the file made here, not one put at that name since. */
static int still_made_here(const struct fl_held *h)
{
    struct stat st, now;
    return fstat(h->fd, &st) == 0 && stat(h->path, &now) == 0 && st.st_dev == now.st_dev &&
           st.st_ino == now.st_ino;
}

static void remove_made_and_die(int sig)
{
    for (size_t k = 0; getpid() == held_owner && k < HELD_MAX; k++) {
        struct fl_held *h = held_made[k];
        if (h && still_made_here(h))
            unlink(h->path);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The signals that end a run from the terminal or a supervisor. */
static const int held_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

/* Only those the user left at their default: nohup's ignored SIGHUP
 * stays ignored. */
static void remove_made_on_signals(void)
{
    static int installed;
    if (installed)
        return;
    installed = 1;
    held_owner = getpid();
    for (size_t k = 0; k < sizeof held_signals / sizeof *held_signals; k++) {
        struct sigaction old, sa;
        if (sigaction(held_signals[k], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = remove_made_and_die;
        sigfillset(&sa.sa_mask);
        sigaction(held_signals[k], &sa, NULL);
    }
}

static void held_signal_set(sigset_t *set)
{
    sigemptyset(set);
    for (size_t k = 0; k < sizeof held_signals / sizeof *held_signals; k++)
        sigaddset(set, held_signals[k]);
}

static void held_track(struct fl_held *h, int on)
{
    for (size_t k = 0; k < HELD_MAX; k++)
        if (held_made[k] == (on ? NULL : h)) {
            held_made[k] = on ? h : NULL;
            return;
        }
}

int fl_held_open(struct fl_held *h, const char *path)
{
    memset(h, 0, sizeof *h);
    h->path = path;
    while ((h->fd = open(path, O_WRONLY | O_CLOEXEC)) < 0 && errno == ENOENT) {
        /* Made and tracked with the signals held: none finds it untracked. */
        remove_made_on_signals();
        sigset_t held, old;
        held_signal_set(&held);
        pthread_sigmask(SIG_BLOCK, &held, &old);
        h->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        int e = errno;
        h->created = h->fd >= 0;
        if (h->created)
            held_track(h, 1);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        errno = e;
        if (h->fd >= 0 || errno != EEXIST)
            break;
    }
    if (h->fd < 0)
        return errno;
    if (!(h->f = open_memstream(&h->buf, &h->len))) {
        int e = errno;
        if (h->created && still_made_here(h))
            unlink(path);
        if (h->created)
            held_track(h, 0);
        close(h->fd);
        return e;
    }
    return 0;
}

int fl_held_close(struct fl_held *h, int discard)
{
    if (!h->f)
        return 0;
    int err = stream_error(h->f);
    if (fclose(h->f) != 0 && !err)
        err = errno;
    h->f = NULL;
    /* Once written whole a file made here is the run's answer: a signal
     * between the last write and its untracking must not remove it. Only
     * then: a FIFO or a terminal given (never removed) may block the write
     * for ever, and the signals must still end the run. */
    sigset_t ending, old;
    sigemptyset(&ending);
    if (h->created)
        held_signal_set(&ending);
    pthread_sigmask(SIG_BLOCK, &ending, &old);
    struct stat st;
    if (!err && !discard && fstat(h->fd, &st) == 0 && S_ISREG(st.st_mode) &&
        ftruncate(h->fd, 0) != 0)
        err = errno;
    for (size_t done = 0; !err && !discard && done < h->len;) {
        ssize_t n = write(h->fd, h->buf + done, h->len - done);
        if (n < 0 && errno != EINTR)
            err = errno;
        else if (n > 0)
            done += (size_t)n;
    }
    if (discard && h->created && still_made_here(h))
        unlink(h->path);
    if (h->created)
        held_track(h, 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (close(h->fd) != 0 && !err && errno != EINTR)
        err = errno;
    free(h->buf);
    h->buf = NULL;
    return err;
}

/* ---- JSON ---------------------------------------------------------------- */

/* Numbers as exact as the text tables or more: 9 significant digits keep
 * a 1.672 ns function call and a 0.0003 s deviation alike. */
#define NUM_FORMAT "%.9g"

/* The library's (src/error.c, which escapes paths with it): the length
 * of the well-formed UTF-8 sequence of two or more bytes at p, or 0. */
size_t fl__utf8_len(const unsigned char *p);

/* JSON text must be UTF-8: a byte that is not part of a well-formed
 * sequence (a path is any bytes) becomes U+FFFD. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x80) {
            size_t n = fl__utf8_len(p);
            if (n)
                fwrite(p, 1, n, f);
            else
                fputs("\\ufffd", f);
            p += n ? n - 1 : 0;
            continue;
        }
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void key(struct fl_json *j, const char *k)
{
    if (!j->first)
        fputc(',', j->f);
    fputs(j->depth == 2 ? "\n    " : "\n  ", j->f);
    j->first = 0;
    put_string(j->f, k);
    fputs(": ", j->f);
}

int fl_json_open(struct fl_json *j, const char *path, const char *suite)
{
    memset(j, 0, sizeof *j);
    if (!path)
        return 0;
    int e = fl_held_open(&j->out, path);
    if (e)
        return e;
    j->f = j->out.f;
    fputc('{', j->f);
    j->depth = 1;
    j->first = 1;
    fl_json_str(j, "suite", suite);
    return 0;
}

void fl_json_rows(struct fl_json *j)
{
    if (!j->f || j->in_rows)
        return;
    key(j, "rows");
    fputc('[', j->f);
    j->in_rows = 1;
    j->first_row = 1;
}

static void end_row(struct fl_json *j)
{
    if (j->depth == 2) {
        fputs("\n  }", j->f);
        j->depth = 1;
        j->first = 0;
    }
}

void fl_json_row(struct fl_json *j)
{
    if (!j->f)
        return;
    if (!j->in_rows)
        fl_json_rows(j);
    end_row(j);
    fputs(j->first_row ? "\n  {" : ",\n  {", j->f);
    j->first_row = 0;
    j->depth = 2;
    j->first = 1;
}

void fl_json_str(struct fl_json *j, const char *k, const char *val)
{
    if (!j->f)
        return;
    key(j, k);
    if (val)
        put_string(j->f, val);
    else
        fputs("null", j->f);
}

void fl_json_num(struct fl_json *j, const char *k, double val)
{
    if (!j->f)
        return;
    key(j, k);
    if (isfinite(val))
        fprintf(j->f, NUM_FORMAT, val);
    else
        fputs("null", j->f);
}

void fl_json_int(struct fl_json *j, const char *k, long long val)
{
    if (!j->f)
        return;
    key(j, k);
    fprintf(j->f, "%lld", val);
}

/* fl_json_close(), or with keep the file as it was. */
static int fl_json_close_keeping(struct fl_json *j, int keep)
{
    if (!j->f)
        return 0;
    end_row(j);
    if (j->in_rows)
        fputs(j->first_row ? "]" : "\n  ]", j->f);
    fputs("\n}\n", j->f);
    j->f = NULL;
    return fl_held_close(&j->out, keep);
}

int fl_json_close(struct fl_json *j)
{
    return fl_json_close_keeping(j, 0);
}

/* ---- Rows: JSON and CSV ---------------------------------------------------- */

static void rows_fail(struct fl_rows *w, int e)
{
    if (!w->err)
        w->err = e;
}

int fl_rows_open(struct fl_rows *w, const char *suite, const char *json_path,
                 const char *csv_path)
{
    memset(w, 0, sizeof *w);
    w->suite = suite;
    w->csv_path = csv_path;
    int e = csv_path ? fl_held_open(&w->csv_out, csv_path) : 0;
    if (e) {
        fprintf(stderr, "forkless bench %s: --csv %s: %s\n", suite, csv_path, strerror(e));
        return -1;
    }
    w->csv = w->csv_out.f;
    if ((e = fl_json_open(&w->json, json_path, suite)) != 0) {
        fprintf(stderr, "forkless bench %s: --json %s: %s\n", suite, json_path, strerror(e));
        fl_held_close(&w->csv_out, 1);
        return -1;
    }
    /* Both into one file would interleave into something neither reads. */
    struct stat a, b;
    if (w->json.f && w->csv && fstat(w->json.out.fd, &a) == 0 && fstat(w->csv_out.fd, &b) == 0 &&
        a.st_dev == b.st_dev && a.st_ino == b.st_ino && !S_ISCHR(a.st_mode)) {
        fprintf(stderr, "forkless bench %s: --json %s and --csv %s are the same file\n", suite,
                json_path, csv_path);
        w->json.f = NULL;
        fl_held_close(&w->json.out, 1);
        fl_held_close(&w->csv_out, 1);
        return FL_ROWS_SAME_FILE;
    }
    return 0;
}

static int rows_active(const struct fl_rows *w)
{
    return w->json.f || w->csv;
}

void fl_rows_meta_str(struct fl_rows *w, const char *key, const char *val)
{
    if (w->nrows == 0 && !w->in_row)
        fl_json_str(&w->json, key, val);
}

void fl_rows_meta_num(struct fl_rows *w, const char *key, double val)
{
    if (w->nrows == 0 && !w->in_row)
        fl_json_num(&w->json, key, val);
}

void fl_rows_meta_int(struct fl_rows *w, const char *key, long long val)
{
    if (w->nrows == 0 && !w->in_row)
        fl_json_int(&w->json, key, val);
}

static void clear_cur(struct fl_rows *w)
{
    for (size_t k = 0; k < w->ncur; k++) {
        free(w->cur[k].key);
        free(w->cur[k].val);
    }
    w->ncur = 0;
}

static void add_field(struct fl_rows *w, const char *key, enum fl_kind kind,
                      const char *val)
{
    if (!rows_active(w) || !w->in_row)
        return;
    if (w->ncur == FL_ROWS_MAX_FIELDS) {
        if (!w->err)
            fprintf(stderr, "forkless bench %s: more than %d fields in a row; "
                    "\"%s\" dropped\n", w->suite, FL_ROWS_MAX_FIELDS, key);
        rows_fail(w, EINVAL);
        return;
    }
    struct fl_field *f = &w->cur[w->ncur];
    f->key = strdup(key);
    f->val = val ? strdup(val) : NULL;
    f->kind = kind;
    if (!f->key || (val && !f->val)) {
        free(f->key);
        free(f->val);
        rows_fail(w, ENOMEM);
        return;
    }
    w->ncur++;
}

void fl_rows_begin(struct fl_rows *w)
{
    if (!rows_active(w))
        return;
    if (w->in_row)
        fl_rows_end(w);
    w->in_row = 1;
    add_field(w, "suite", FL_KIND_STR, w->suite);
}

void fl_rows_str(struct fl_rows *w, const char *key, const char *val)
{
    add_field(w, key, FL_KIND_STR, val);
}

void fl_rows_int(struct fl_rows *w, const char *key, long long val)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", val);
    add_field(w, key, FL_KIND_INT, buf);
}

void fl_rows_num(struct fl_rows *w, const char *key, double val)
{
    char buf[64];
    if (isfinite(val))
        snprintf(buf, sizeof buf, NUM_FORMAT, val);
    add_field(w, key, FL_KIND_NUM, isfinite(val) ? buf : NULL);
}

static void csv_cell(FILE *f, const char *s)
{
    if (!s)
        return;
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void fl_rows_end(struct fl_rows *w)
{
    if (!rows_active(w) || !w->in_row)
        return;
    w->in_row = 0;
    if (w->json.f) {
        fl_json_row(&w->json);
        for (size_t k = 0; k < w->ncur; k++) {
            const struct fl_field *f = &w->cur[k];
            if (f->kind == FL_KIND_STR || !f->val) {
                fl_json_str(&w->json, f->key, f->val);
            } else {
                key(&w->json, f->key);   /* a number, already formatted */
                fputs(f->val, w->json.f);
            }
        }
    }
    if (w->csv) {
        int same = 1;
        if (w->nrows == 0) {
            for (size_t k = 0; k < w->ncur; k++) {
                w->cols[k] = strdup(w->cur[k].key);
                if (!w->cols[k])
                    rows_fail(w, ENOMEM);
                csv_cell(w->csv, w->cur[k].key);
                fputc(k + 1 < w->ncur ? ',' : '\n', w->csv);
            }
            w->ncols = w->ncur;
        } else {
            same = w->ncur == w->ncols;
            for (size_t k = 0; same && k < w->ncur; k++)
                same = w->cols[k] && strcmp(w->cols[k], w->cur[k].key) == 0;
        }
        if (same) {
            for (size_t k = 0; k < w->ncur; k++) {
                csv_cell(w->csv, w->cur[k].val);
                fputc(k + 1 < w->ncur ? ',' : '\n', w->csv);
            }
        } else {
            if (!w->err)
                fprintf(stderr, "forkless bench %s: %s: row %zu has other columns "
                        "than the first; left out of the CSV\n", w->suite,
                        w->csv_path, w->nrows + 1);
            rows_fail(w, EINVAL);
        }
    }
    w->nrows++;
    clear_cur(w);
}

int fl_rows_close(struct fl_rows *w)
{
    if (w->in_row)
        fl_rows_end(w);
    clear_cur(w);
    int err = w->err;
    int e = fl_json_close_keeping(&w->json, w->nrows == 0);
    if (e && !err)
        err = e;
    w->csv = NULL;
    if ((e = fl_held_close(&w->csv_out, w->nrows == 0)) != 0 && !err)
        err = e;
    for (size_t k = 0; k < w->ncols; k++)
        free(w->cols[k]);
    w->ncols = 0;
    return err;
}

void fl_rows_error(const char *suite, const char *doing, const char *json,
                   const char *csv, int e)
{
    if (e < 0)
        return;  /* said already */
    fprintf(stderr, "forkless bench %s: %s %s%s%s: %s\n", suite, doing,
            json ? json : "", json && csv ? " / " : "", csv ? csv : "",
            strerror(e));
}

void fl_rows_start(struct fl_rows *w, const char *suite, const char *machine,
                   double load0)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int pinned = fl_cpu_pinned();
    printf("load average %.2f at start", load0);
    if (pinned >= 0)
        printf("; pinned to CPU %d, with the children (--cpu)", pinned);
    putchar('\n');
    if (load0 > 0.75 * (double)cpus)
        fprintf(stderr, "forkless bench %s: warning: the machine is busy (load %.2f on "
                "%ld CPUs); other processes will add noise to the times\n", suite,
                load0, cpus);
    /* A verdict "at every heap" covers only the heaps measured. */
    const char *left_out = fl_mem_left_out();
    if (*left_out)
        printf("left out of the defaults for want of memory: %s\n", left_out);
    fl_rows_meta_str(w, "machine", machine);
    fl_rows_meta_num(w, "loadavg_start", load0);
    fl_rows_meta_int(w, "cpu", pinned);
    fl_rows_meta_str(w, "left_out_for_memory", *left_out ? left_out : NULL);
}
