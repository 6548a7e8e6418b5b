/* stats.c: see stats.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t fl_bench_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
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

/* ---- JSON ---------------------------------------------------------------- */

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
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
    j->f = fopen(path, "w");
    if (!j->f)
        return errno;
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
        fprintf(j->f, "%.3f", val);
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

int fl_json_close(struct fl_json *j)
{
    if (!j->f)
        return 0;
    end_row(j);
    if (j->in_rows)
        fputs(j->first_row ? "]" : "\n  ]", j->f);
    fputs("\n}\n", j->f);
    int err = ferror(j->f) ? EIO : 0;
    if (fclose(j->f) != 0 && !err)
        err = errno;
    j->f = NULL;
    return err;
}
