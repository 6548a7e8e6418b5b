/* signals.c: signal names and numbers on the command line, and the
 * child's signal settings. */
#include "signals.h"

#include <ctype.h>
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

/* Decimal digits only, at most 3 of them ("064" too). */
static int small_number(const char *text, long *v)
{
    size_t n = strlen(text);
    if (n == 0 || n > 3)
        return -1;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)text[i]))
            return -1;
        *v = *v * 10 + (text[i] - '0');
    }
    return 0;
}

int parse_signal(const char *text, int *sig)
{
    long v;
    if (isdigit((unsigned char)text[0])) {
        if (small_number(text, &v) != 0 || !valid_signal(v))
            return -1;
        *sig = (int)v;
        return 0;
    }
    const char *name = strncasecmp(text, "SIG", 3) == 0 ? text + 3 : text;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (strcasecmp(name, names[i].name) == 0) {
            *sig = names[i].sig;
            return 0;
        }
    }
    if (strncasecmp(name, "RTMIN", 5) == 0 || strncasecmp(name, "RTMAX", 5) == 0) {
        bool min = toupper((unsigned char)name[3]) == 'I';
        const char *rest = name + 5;
        v = 0;
        if (*rest != '\0' && (*rest != (min ? '+' : '-') || small_number(rest + 1, &v) != 0))
            return -1;
        v = min ? SIGRTMIN + v : SIGRTMAX - v;
        if (v < SIGRTMIN || v > SIGRTMAX)
            return -1;
        *sig = (int)v;
        return 0;
    }
    return -1;
}

int parse_timeout_signal(const char *text, int *sig)
{
    long v;
    if (small_number(text, &v) == 0 && v == 0) {
        *sig = 0;
        return 0;
    }
    return parse_signal(text, sig);
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
        if (len >= sizeof item) {
            cli_error("%s: invalid signal \"%.*s\"", option, (int)len, p);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        p += len + (p[len] == ',');
        if (len == 0)
            continue;
        if (parse_signal(item, &sig) != 0) {
            cli_error("%s: invalid signal \"%s\" (a name such as PIPE or RTMIN+1, "
                      "or a number: 1-31, %d-%d)", option, item, SIGRTMIN, SIGRTMAX);
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
