/* sink.c: one output stream's bytes on their way into a struct fl_output:
 * the callback (whole chunks or whole lines), then the keeping (all, the
 * head, or a ring of the tail), with the counts.
 *
 * Nothing here does I/O; the exchange (io.c) reads, and asks the sink
 * afterwards whether the child must be stopped (fl__sink_wants_stop). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define MAX_LINE_DEFAULT ((size_t)64 << 10)
#define FIRST_CAP 4096

const char *fl__sink_problem(const struct fl_sink *c)
{
    if ((unsigned)c->overflow > FL_OVERFLOW_STOP)
        return "overflow is not an enum fl_overflow value";
    /* A buffer needs room for the closing NUL, and one without a size
     * (or a size without a buffer) is a mistake, not a request. */
    if (c->buf ? c->size == 0 : c->size != 0)
        return c->buf ? "buf has no size" : "size is set without buf";
    if (c->buf && c->discard)
        return "buf and discard together";
    if (c->buf && c->limit > c->size - 1)
        return "limit is over size - 1, the room buf has";
    if (c->lines && !c->on_output)
        return "lines without on_output";
    if (c->max_line && !c->lines)
        return "max_line without lines";
    return NULL;
}

int fl__sink_check(const struct fl_sink *c)
{
    return fl__sink_problem(c) ? EINVAL : 0;
}

void fl__sink_init(struct fl__sink *s, const struct fl_sink *cfg, int stream,
                   struct fl_output *out)
{
    *s = (struct fl__sink){ .cfg = cfg, .out = out, .stream = stream };
    s->max_line = cfg->max_line ? cfg->max_line : MAX_LINE_DEFAULT;
    if (cfg->buf) {
        s->buf = cfg->buf;
        s->cap = cfg->size;
        s->limit = cfg->limit ? cfg->limit : cfg->size - 1;
    } else {
        s->owned = FL__OWN_MALLOC;
        /* SIZE_MAX - 1 at most, so that limit + 1 (the NUL) cannot wrap. */
        s->limit = cfg->limit && cfg->limit < SIZE_MAX ? cfg->limit : SIZE_MAX - 1;
    }
}

static void emit(struct fl__sink *s, const char *d, size_t n)
{
    if (s->quiet || n == 0)
        return;
    if (s->cfg->on_output(s->cfg->ctx, s->stream, d, n) != 0) {
        s->quiet = true;
        s->cancelled = true;
    }
}

/* Room for need more bytes of a split line: the buffer grows with the
 * line, never past max_line, which is only a bound (a caller may give a
 * huge one and meet only short lines). */
static bool line_room(struct fl__sink *s, size_t need)
{
    size_t want = s->line_len + need;
    if (want <= s->line_cap)
        return true;
    size_t cap = s->line_cap ? s->line_cap : 256;
    while (cap < want)
        cap = cap > s->max_line / 2 ? s->max_line : cap * 2;
    char *grown = realloc(s->line, cap);
    if (!grown)
        return false;
    s->line = grown;
    s->line_cap = cap;
    return true;
}

/* Whole lines go straight from the chunk; only a line split across reads
 * is copied, into a buffer that grows with it up to max_line bytes. */
static void split_lines(struct fl__sink *s, const char *d, size_t n)
{
    while (n > 0 && !s->quiet) {
        const char *nl = memchr(d, '\n', n);
        size_t piece = nl ? (size_t)(nl - d) + 1 : n;
        if (s->line_len == 0 && (piece >= s->max_line || nl)) {
            size_t take = piece < s->max_line ? piece : s->max_line;
            emit(s, d, take);
            d += take;
            n -= take;
            continue;
        }
        size_t room = s->max_line - s->line_len;
        size_t take = piece < room ? piece : room;
        if (!line_room(s, take)) {
            s->nomem = true;
            return;
        }
        memcpy(s->line + s->line_len, d, take);
        s->line_len += take;
        d += take;
        n -= take;
        if (s->line_len == s->max_line || d[-1] == '\n') {
            emit(s, s->line, s->line_len);
            s->line_len = 0;
        }
    }
}

/*
 * A big buffer is a mapping of its own, with transparent huge pages asked
 * for (MADV_HUGEPAGE). A capture spends most of its time in the page
 * faults of the fresh buffer, one per 4 KiB page; 2 MiB pages take 512
 * times fewer. Measured on the 2-CPU VM, 64 MiB read from a pipe into a
 * fresh buffer, best of 8: 1460 MiB/s into malloc(), 3680 MiB/s into such
 * a mapping. mremap() grows it without copying. Where THP is off
 * ("never"), the advice does nothing and the mapping costs what malloc()'s
 * own mapping of that size would. Ended, the mapping is cut to the pages
 * that hold the bytes and the NUL, so that fl_result_free() knows its
 * length from .len alone.
 */
#define BIG ((size_t)2 << 20)

static size_t round_up(size_t n, size_t to)
{
    return n > SIZE_MAX - to ? SIZE_MAX : (n + to - 1) / to * to;
}

/* A mapping of cap bytes (a multiple of BIG) at a BIG boundary, so that
 * every 2 MiB of it can be one huge page. */
static char *map_aligned(size_t cap)
{
    size_t span = cap + BIG;
    char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    char *a = (char *)(((uintptr_t)p + BIG - 1) & ~(uintptr_t)(BIG - 1));
    if (a > p)
        munmap(p, (size_t)(a - p));
    if (p + span > a + cap)
        munmap(a + cap, (size_t)(p + span - (a + cap)));
    return a;
}

static bool grow_mapped(struct fl__sink *s, size_t cap)
{
    cap = round_up(cap, BIG);
    if (cap == SIZE_MAX)
        return false;
    char *p;
    if (s->owned == FL__OWN_MAP) {
        p = mremap(s->buf, s->cap, cap, MREMAP_MAYMOVE);
        if (p == MAP_FAILED)
            return false;
    } else {
        if (!(p = map_aligned(cap)))
            return false;
        if (s->len)
            memcpy(p, s->buf, s->len);
        free(s->buf);
        s->owned = FL__OWN_MAP;
    }
    (void)madvise(p, cap, MADV_HUGEPAGE);  /* advice: EINVAL without THP is fine */
    s->buf = p;
    s->cap = cap;
    return true;
}

/* Room for need kept bytes and the NUL. A library buffer doubles, and
 * never past the limit: a ring is then allocated once, at its full size,
 * only for output that fills it. */
static bool reserve(struct fl__sink *s, size_t need)
{
    if (need < s->cap)
        return true;
    if (s->owned == FL__OWN_NONE)
        return false;
    size_t cap = s->cap ? s->cap : FIRST_CAP;
    while (cap <= need)
        cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
    if (cap > s->limit + 1)
        cap = s->limit + 1;
    if (cap > BIG)
        return grow_mapped(s, cap);
    char *p = realloc(s->buf, cap);
    if (!p)
        return false;
    s->buf = p;
    s->cap = cap;
    return true;
}

/* The pages of a mapped buffer past its bytes and NUL go back. */
static void trim_mapped(struct fl__sink *s)
{
    size_t keep = round_up(s->len + 1, (size_t)sysconf(_SC_PAGESIZE));
    if (s->owned == FL__OWN_MAP && keep < s->cap) {
        munmap(s->buf + keep, s->cap - keep);
        s->cap = keep;
    }
}

void fl__output_free(struct fl_output *out)
{
    if (out->data && out->owned_ == FL__OWN_MAP)
        munmap(out->data, round_up(out->len + 1, (size_t)sysconf(_SC_PAGESIZE)));
    else if (out->data && out->owned_ == FL__OWN_MALLOC)
        free(out->data);
    memset(out, 0, sizeof *out);
}

static void keep(struct fl__sink *s, const char *d, size_t n)
{
    /* Nothing is kept; a limit bounds the bytes counted, so that "stop it
     * past N bytes" needs no buffer. s->total has n already. */
    if (s->cfg->discard && s->cfg->limit && s->total > s->cfg->limit) {
        s->overflowed = true;
        s->overflow_stop |= s->cfg->overflow == FL_OVERFLOW_STOP;
    }
    if (s->cfg->discard || s->nomem)
        return;
    if (s->len < s->limit) {
        size_t take = n < s->limit - s->len ? n : s->limit - s->len;
        if (!reserve(s, s->len + take)) {
            s->nomem = true;
            return;
        }
        memcpy(s->buf + s->len, d, take);
        s->len += take;
        d += take;
        n -= take;
    }
    if (n == 0)
        return;
    s->overflowed = true;
    if (s->cfg->overflow == FL_OVERFLOW_STOP)
        s->overflow_stop = true;
    if (s->cfg->overflow != FL_OVERFLOW_KEEP_TAIL || s->limit == 0)
        return;
    /* The ring is full: head is both the oldest byte and where the next
     * goes. Two copies at most per chunk; the order is put right once, at
     * the end. */
    if (n >= s->limit) {
        memcpy(s->buf, d + n - s->limit, s->limit);
        s->head = 0;
        return;
    }
    size_t first = n < s->limit - s->head ? n : s->limit - s->head;
    memcpy(s->buf + s->head, d, first);
    memcpy(s->buf, d + first, n - first);
    s->head = (s->head + n) % s->limit;
}

static void hand_on(struct fl__sink *s, const char *d, size_t n)
{
    if (s->cfg->on_output && !s->quiet) {
        if (s->cfg->lines)
            split_lines(s, d, n);
        else
            emit(s, d, n);
    }
}

void fl__sink_put(struct fl__sink *s, const char *d, size_t n)
{
    s->total += n;
    hand_on(s, d, n);
    keep(s, d, n);
}

bool fl__sink_wants_stop(const struct fl__sink *s)
{
    return s->nomem || s->cancelled || s->overflow_stop;
}

static void reverse(char *p, size_t n)
{
    for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
        char t = p[i];
        p[i] = p[j - 1];
        p[j - 1] = t;
    }
}

void fl__sink_end(struct fl__sink *s)
{
    if (s->line_len > 0)
        emit(s, s->line, s->line_len);
    s->line_len = 0;
    free(s->line);
    s->line = NULL;
    s->line_cap = 0;
    if (s->head > 0) {  /* rotate left by head, in place */
        reverse(s->buf, s->head);
        reverse(s->buf + s->head, s->len - s->head);
        reverse(s->buf, s->len);
        s->head = 0;
    }
    if (!s->cfg->discard) {
        if (reserve(s, s->len))
            s->buf[s->len] = '\0';
        else
            s->nomem = true;  /* not even the NUL of an empty output */
        trim_mapped(s);
    }
    *s->out = (struct fl_output){
        .data = s->buf,
        .len = s->len,
        .total = s->total,
        .dropped = s->total - s->len,
        .overflowed = s->overflowed,
        .eof_missed = s->out->eof_missed,
        .owned_ = s->buf ? s->owned : FL__OWN_NONE,
    };
}

size_t fl__sink_room(struct fl__sink *s, size_t want, char **at)
{
    if (s->cfg->discard || s->nomem || s->len >= s->limit)
        return 0;
    size_t left = s->limit - s->len;
    /* Grown no faster than doubling: a short output keeps a short buffer. */
    size_t grow = s->len > FIRST_CAP ? s->len : FIRST_CAP;
    grow = grow < want ? grow : want;
    if (!reserve(s, s->len + (grow < left ? grow : left)))
        return 0;  /* the copy path meets the failure again and says so */
    size_t room = s->cap - 1 - s->len;
    room = room < left ? room : left;
    *at = s->buf + s->len;
    return room < want ? room : want;
}

void fl__sink_took(struct fl__sink *s, size_t n)
{
    const char *d = s->buf + s->len;
    s->len += n;
    s->total += n;
    hand_on(s, d, n);
}
