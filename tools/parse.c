/* parse.c: strict parsers for option values. Strict means: no leading
 * spaces, no signs, no trailing junk, no silent wrap-around; strtol and
 * strtod accept too much ("-1" as ULONG_MAX, " 5", "inf", "0x10"). A
 * duration too long for forkless is the exception: it means the longest
 * one, as in timeout(1). */
#include "parse.h"

#include <ctype.h>
#include <limits.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Reads the decimal digits at *p into *value, advancing *p. Fails on no
 * digits or overflow. */
static int read_decimal(const char **p, uint64_t *value)
{
    const char *s = *p;
    uint64_t v = 0;
    if (!isdigit((unsigned char)*s))
        return -1;
    for (; isdigit((unsigned char)*s); s++) {
        if (__builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v))
            return -1;
    }
    *p = s;
    *value = v;
    return 0;
}

/* A decimal number "INT.FRAC" read in place, as its significant digits
 * (leading zeros dropped) d1 d2 ... dn and the position of the point:
 * the value is 0.d1 d2 ... dn x 10^point; n == 0 means zero. */
struct decimal {
    const char *text;  /* "INT.FRAC" or "INT" or ".FRAC" */
    size_t nint;       /* digits before the '.' (the '.' is text[nint]) */
    size_t lead;       /* leading zeros, skipped */
    size_t n;
    int64_t point;
};

/* Significant digit k (0-based), 0 outside them. */
static unsigned decimal_digit(const struct decimal *d, int64_t k)
{
    if (k < 0 || (uint64_t)k >= d->n)
        return 0;
    size_t j = d->lead + (size_t)k;           /* among all the digits */
    return (unsigned)(d->text[j < d->nint ? j : j + 1] - '0');
}

/* ceil(value x unit), for unit < 10^9: the whole part times unit, plus
 * the fraction times unit rounded up, so that a positive value never
 * becomes 0 however many digits it has. Fails on overflow. */
static int decimal_times_ceil(const struct decimal *d, uint64_t unit, uint64_t *out)
{
    *out = 0;
    if (d->n == 0)
        return 0;
    if (d->point > 20)
        return -1;  /* at least 10^19 x unit */
    uint64_t whole = 0;
    for (int64_t k = 0; k < d->point; k++) {
        if (__builtin_mul_overflow(whole, 10, &whole) ||
            __builtin_add_overflow(whole, decimal_digit(d, k), &whole))
            return -1;
    }
    if (__builtin_mul_overflow(whole, unit, &whole))
        return -1;
    /* The fraction times unit, by long multiplication from its last
     * digit: the carry ends as the whole part of the product, and any
     * digit it leaves behind is a remainder to round up. The positions
     * between the point and the first digit (point < 0) hold zeros: they
     * only shift the carry, so stop once it is 0. */
    uint64_t carry = 0;
    bool remainder = false;
    for (int64_t k = (int64_t)d->n - 1; k >= d->point && k >= 0; k--) {
        uint64_t t = decimal_digit(d, k) * unit + carry;
        remainder |= t % 10 != 0;
        carry = t / 10;
    }
    for (int64_t k = -1; k >= d->point && carry != 0; k--) {
        remainder |= carry % 10 != 0;
        carry /= 10;
    }
    if (__builtin_add_overflow(whole, carry + (remainder ? 1 : 0), &whole))
        return -1;
    *out = whole;
    return 0;
}

/* The decimal point of the user's locale (LC_NUMERIC, LC_ALL, LANG) when
 * it is one byte and not '.', as "1,5" in de_DE; else 0. LC_NUMERIC is the
 * user's only for the look, so that forkless's own numbers stay in C; and
 * setlocale(), as newlocale() in glibc 2.36 leaks its LOCPATH list. The
 * options are read before forkless has a second thread. */
static char locale_radix(void)
{
    static int radix = -1;
    if (radix < 0) {
        radix = 0;
        const char *was = setlocale(LC_NUMERIC, NULL);
        char saved[256];
        if (was && (size_t)snprintf(saved, sizeof saved, "%s", was) < sizeof saved &&
            setlocale(LC_NUMERIC, "")) {
            const char *r = localeconv()->decimal_point;
            if (r && r[0] && !r[1] && r[0] != '.')
                radix = (unsigned char)r[0];
            setlocale(LC_NUMERIC, saved);
        }
    }
    return (char)radix;
}

/* Reads "DIGITS[.DIGITS]" at *p (either part may be empty, not both); the
 * locale's decimal point serves too, as in timeout(1). */
static int read_decimal_number(const char **p, struct decimal *d)
{
    const char *s = *p;
    size_t nint = 0, nfrac = 0;
    while (isdigit((unsigned char)s[nint]))
        nint++;
    const char *end = s + nint;
    if (*end == '.' || (*end && *end == locale_radix())) {
        while (isdigit((unsigned char)end[1 + nfrac]))
            nfrac++;
        end += 1 + nfrac;
    }
    if (nint + nfrac == 0)
        return -1;
    *d = (struct decimal){ .text = s, .nint = nint };
    size_t all = nint + nfrac;
    while (d->lead < all && s[d->lead < nint ? d->lead : d->lead + 1] == '0')
        d->lead++;
    d->n = all - d->lead;
    d->point = (int64_t)nint - (int64_t)d->lead;
    if (d->n == 0)
        d->point = 0;
    *p = end;
    return 0;
}

/* Reads an optional exponent "e[+-]DIGITS" at *p into *e, saturating far
 * beyond any duration. Fails on an 'e' without digits. */
static int read_exponent(const char **p, int64_t *e)
{
    const char *s = *p;
    *e = 0;
    if (*s != 'e' && *s != 'E')
        return 0;
    s++;
    bool negative = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    int64_t v = 0;
    for (; isdigit((unsigned char)*s); s++)
        if (v < 1000000)
            v = v * 10 + (*s - '0');
    *e = negative ? -v : v;
    *p = s;
    return 0;
}

int parse_duration_ms(const char *text, int64_t *ms)
{
    static const struct { const char *suffix; uint64_t ms; } units[] = {
        { "", 1000 }, { "s", 1000 }, { "ms", 1 }, { "m", 60000 }, { "h", 3600000 },
        { "d", 86400000 },
    };
    const char *p = text;
    struct decimal d;
    int64_t exponent;
    if (read_decimal_number(&p, &d) != 0 || read_exponent(&p, &exponent) != 0)
        return -1;
    if (d.n > 0)
        d.point += exponent;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(p, units[i].suffix) != 0)
            continue;
        uint64_t v;
        /* Too long for us means as long as we can: timeout(1) does so. */
        if (decimal_times_ceil(&d, units[i].ms, &v) != 0 || v > DURATION_MAX_MS)
            v = DURATION_MAX_MS;
        *ms = (int64_t)v;
        return 0;
    }
    return -1;
}

int parse_fd_number(const char *text, int *fd)
{
    const char *p = text;
    uint64_t v;
    if (read_decimal(&p, &v) != 0 || *p != '\0' || v > INT_MAX)
        return -1;
    *fd = (int)v;
    return 0;
}

int parse_int_in(const char *text, int min, int max, int *out)
{
    const char *p = text;
    bool negative = *p == '-';
    uint64_t v;
    if (*p == '-' || *p == '+')
        p++;
    if (read_decimal(&p, &v) != 0 || *p != '\0' || v > (uint64_t)INT_MAX + 1)
        return -1;
    int64_t n = negative ? -(int64_t)v : (int64_t)v;
    if (n < min || n > max)
        return -1;
    *out = (int)n;
    return 0;
}

int parse_id(const char *text, unsigned *id)
{
    const char *p = text;
    uint64_t v;
    if (read_decimal(&p, &v) != 0 || *p != '\0' || v >= UINT_MAX)
        return -1;
    *id = (unsigned)v;
    return 0;
}

int parse_fd_map(const char *text, int *child_fd, int *parent_fd)
{
    const char *p = text;
    uint64_t child;
    int parent;
    if (read_decimal(&p, &child) != 0 || *p != '=' || child > INT_MAX ||
        parse_fd_number(p + 1, &parent) != 0)
        return -1;
    *child_fd = (int)child;
    *parent_fd = parent;
    return 0;
}

int parse_umask(const char *text, mode_t *mask)
{
    unsigned long v = 0;
    if (*text == '\0')
        return -1;
    /* Leading zeros are fine (a shell's umask takes 00022); past 0777 is
     * refused as it is read, so that no length can wrap. */
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '7')
            return -1;
        v = v * 8 + (unsigned long)(*p - '0');
        if (v > 0777)
            return -1;
    }
    *mask = (mode_t)v;
    return 0;
}

int rlimit_resource_by_name(const char *name)
{
    static const struct { const char *name; int resource; } names[] = {
        { "AS", RLIMIT_AS },           { "CORE", RLIMIT_CORE },
        { "CPU", RLIMIT_CPU },         { "DATA", RLIMIT_DATA },
        { "FSIZE", RLIMIT_FSIZE },     { "LOCKS", RLIMIT_LOCKS },
        { "MEMLOCK", RLIMIT_MEMLOCK }, { "MSGQUEUE", RLIMIT_MSGQUEUE },
        { "NICE", RLIMIT_NICE },       { "NOFILE", RLIMIT_NOFILE },
        { "NPROC", RLIMIT_NPROC },     { "RSS", RLIMIT_RSS },
        { "RTPRIO", RLIMIT_RTPRIO },   { "RTTIME", RLIMIT_RTTIME },
        { "SIGPENDING", RLIMIT_SIGPENDING }, { "STACK", RLIMIT_STACK },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(name, names[i].name) == 0)
            return names[i].resource;
    return -1;
}

/* A limit value: decimal (RLIM_INFINITY's own number too), or
 * "unlimited" (also "infinity", and -1 as prlimit(1) takes it); ""
 * means "keep *value". */
static int parse_rlimit_value(const char *text, size_t len, rlim_t *value)
{
    if (len == 0)
        return 0;
    if ((len == 9 && strncasecmp(text, "unlimited", 9) == 0) ||
        (len == 8 && strncasecmp(text, "infinity", 8) == 0) || (len == 2 && !strncmp(text, "-1", 2))) {
        *value = RLIM_INFINITY;
        return 0;
    }
    const char *p = text;
    uint64_t v;
    if (read_decimal(&p, &v) != 0 || (size_t)(p - text) != len ||
        v > (uint64_t)RLIM_INFINITY)
        return -1;
    *value = (rlim_t)v;
    return 0;
}

int parse_rlimit(const char *text, int *resource, rlim_t *soft, rlim_t *hard)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || (size_t)(eq - text) >= 16)
        return eq ? -2 : -1;
    char name[16];
    memcpy(name, text, (size_t)(eq - text));
    name[eq - text] = '\0';
    int r = rlimit_resource_by_name(name);
    if (r < 0)
        return -2;

    const char *value = eq + 1;
    const char *colon = strchr(value, ':');
    size_t soft_len = colon ? (size_t)(colon - value) : strlen(value);
    if (!colon && soft_len == 0)
        return -1;
    if (colon && soft_len == 0 && colon[1] == '\0')
        return -1;  /* "NAME=:" sets nothing: surely a mistake */

    /* The child inherits our limits, so "keep" means our current value. */
    struct rlimit current;
    if (getrlimit(r, &current) != 0)
        return -1;
    rlim_t s = current.rlim_cur, h = current.rlim_max;
    if (parse_rlimit_value(value, soft_len, &s) != 0)
        return -1;
    if (!colon)
        h = s;
    else if (parse_rlimit_value(colon + 1, strlen(colon + 1), &h) != 0)
        return -1;
    *resource = r;
    *soft = s;
    *hard = h;
    return 0;
}
