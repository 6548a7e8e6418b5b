/* signals.c: signal names and numbers on the command line, and the
 * child's signal settings. */
#include "signals.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

/* The first name of a number is the one messages use. */
static const struct { const char *name; int sig; } names[] = {
    { "HUP", SIGHUP },     { "INT", SIGINT },       { "QUIT", SIGQUIT },
    { "ILL", SIGILL },     { "TRAP", SIGTRAP },     { "ABRT", SIGABRT },
    { "IOT", SIGIOT },     { "BUS", SIGBUS },       { "FPE", SIGFPE },
    { "KILL", SIGKILL },   { "USR1", SIGUSR1 },     { "SEGV", SIGSEGV },
    { "USR2", SIGUSR2 },   { "PIPE", SIGPIPE },     { "ALRM", SIGALRM },
    { "TERM", SIGTERM },
#ifdef SIGSTKFLT
    { "STKFLT", SIGSTKFLT },
#endif
    { "CHLD", SIGCHLD },   { "CLD", SIGCHLD },      { "CONT", SIGCONT },
    { "STOP", SIGSTOP },   { "TSTP", SIGTSTP },     { "TTIN", SIGTTIN },
    { "TTOU", SIGTTOU },   { "URG", SIGURG },       { "XCPU", SIGXCPU },
    { "XFSZ", SIGXFSZ },   { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
    { "WINCH", SIGWINCH }, { "IO", SIGIO },         { "POLL", SIGPOLL },
    { "PWR", SIGPWR },     { "SYS", SIGSYS },
};

static bool valid_signal(long sig)
{
    return (sig >= 1 && sig < 32) || (sig >= SIGRTMIN && sig <= SIGRTMAX);
}

/* Decimal digits only, any number of them (leading zeros too). */
static int decimal(const char *text, long *v)
{
    if (!*text)
        return -1;
    *v = 0;
    for (const char *c = text; *c; c++) {
        if (!isdigit((unsigned char)*c) || *v > (INT_MAX - 9) / 10)
            return -1;
        *v = *v * 10 + (*c - '0');
    }
    return 0;
}

/* A number as timeout(1) and env(1) read one: a shell's exit status
 * 128+N (ksh's 256+N) stands for signal N, so 137 is KILL. */
static int signal_number(const char *text, long *v)
{
    if (decimal(text, v) != 0)
        return -1;
    *v &= *v >= 0xff ? 0xff : 0x7f;
    return 0;
}

/* "RTMIN", "RTMIN+2", "RTMIN2", "RTMAX-1", "RTMAX-0", as gnulib's
 * str2sig() reads them: a sign then digits, or digits alone. */
static int realtime_signal(const char *name, long *v)
{
    bool min = toupper((unsigned char)name[3]) == 'I';
    const char *rest = name + 5;
    bool minus = *rest == '-';
    if (*rest == '+' || *rest == '-')
        rest++;
    long n = 0;
    if (rest != name + 5 || *rest) {
        if (decimal(rest, &n) != 0)
            return -1;
    }
    if (minus)
        n = -n;
    if (min ? n < 0 || n > SIGRTMAX - SIGRTMIN : n > 0 || n < SIGRTMIN - SIGRTMAX)
        return -1;
    *v = (min ? SIGRTMIN : SIGRTMAX) + n;
    return 0;
}

/* Any signal, 0 ("EXIT") included; -1 for no such one. */
static int any_signal(const char *text, int *sig)
{
    long v;
    if (isdigit((unsigned char)text[0])) {
        if (signal_number(text, &v) != 0 || (v != 0 && !valid_signal(v)))
            return -1;
        *sig = (int)v;
        return 0;
    }
    const char *name = strncasecmp(text, "SIG", 3) == 0 ? text + 3 : text;
    /* SIG15: gnulib's str2sig() reads a number after the prefix as the
     * signal's own, without the shell's 128+N. */
    if (name != text && isdigit((unsigned char)name[0])) {
        if (decimal(name, &v) != 0 || (v != 0 && !valid_signal(v)))
            return -1;
        *sig = (int)v;
        return 0;
    }
    if (strcasecmp(name, "EXIT") == 0) {
        *sig = 0;
        return 0;
    }
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (strcasecmp(name, names[i].name) == 0) {
            *sig = names[i].sig;
            return 0;
        }
    }
    if ((strncasecmp(name, "RTMIN", 5) == 0 || strncasecmp(name, "RTMAX", 5) == 0) &&
        realtime_signal(name, &v) == 0) {
        *sig = (int)v;
        return 0;
    }
    return -1;
}

int parse_signal(const char *text, int *sig)
{
    int s;
    if (any_signal(text, &s) != 0 || s == 0)
        return -1;
    *sig = s;
    return 0;
}

int parse_timeout_signal(const char *text, int *sig)
{
    return any_signal(text, sig);
}

const char *signal_name(int sig, char *buf, size_t size)
{
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (names[i].sig == sig) {
            snprintf(buf, size, "%s", names[i].name);
            return buf;
        }
    }
    if (sig >= SIGRTMIN && sig <= SIGRTMAX) {
        int from_min = sig - SIGRTMIN, from_max = SIGRTMAX - sig;
        if (from_min == 0)
            snprintf(buf, size, "RTMIN");
        else if (from_max == 0)
            snprintf(buf, size, "RTMAX");
        else if (from_min <= from_max)
            snprintf(buf, size, "RTMIN+%d", from_min);
        else
            snprintf(buf, size, "RTMAX-%d", from_max);
        return buf;
    }
    snprintf(buf, size, "%d", sig);
    return buf;
}

void child_signals_init(struct child_signals *cs)
{
    *cs = (struct child_signals){ 0 };
    sigemptyset(&cs->defaults);
    sigemptyset(&cs->ignore);
    sigemptyset(&cs->block);
    sigemptyset(&cs->unblock);
}

static void apply(struct child_signals *cs, enum signal_action action, int sig)
{
    switch (action) {
    case SIGNAL_DEFAULT:
        sigdelset(&cs->ignore, sig);
        sigaddset(&cs->defaults, sig);
        sigdelset(&cs->block, sig);
        sigaddset(&cs->unblock, sig);
        cs->any_default = cs->any_mask = true;
        break;
    case SIGNAL_IGNORE:
        sigdelset(&cs->defaults, sig);
        sigaddset(&cs->ignore, sig);
        cs->any_ignore = true;
        break;
    case SIGNAL_BLOCK:
        sigdelset(&cs->unblock, sig);
        sigaddset(&cs->block, sig);
        cs->any_mask = true;
        break;
    }
}

int child_signals_add(struct child_signals *cs, enum signal_action action,
                      const char *option, const char *list)
{
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        char item[32];
        int sig;
        bool fits = len < sizeof item;
        memcpy(item, p, fits ? len : 0);
        item[fits ? len : 0] = '\0';
        const char *text = p;
        p += len + (p[len] == ',');
        if (len == 0)
            continue;
        if (!fits || parse_signal(item, &sig) != 0) {
            cli_error("%s: invalid signal \"%.*s\" (a name such as PIPE or RTMIN+1, or a number: "
                      "1-31, %d-%d, or 128 more)", option, (int)len, text, SIGRTMIN, SIGRTMAX);
            return -1;
        }
        if ((sig == SIGKILL || sig == SIGSTOP) && action != SIGNAL_BLOCK) {
            cli_error("%s %s: SIGKILL and SIGSTOP cannot be %s", option, item,
                      action == SIGNAL_IGNORE ? "ignored" : "reset (they always have "
                      "their default action)");
            return -1;
        }
        apply(cs, action, sig);
    }
    return 0;
}

void child_signals_mask(const struct child_signals *cs, const sigset_t *base, sigset_t *out)
{
    *out = *base;
    for (int sig = 1; sig <= SIGRTMAX; sig++) {
        if (sigismember(&cs->block, sig) == 1)
            sigaddset(out, sig);
        else if (sigismember(&cs->unblock, sig) == 1)
            sigdelset(out, sig);
    }
}
