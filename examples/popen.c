/*
 * popen.c: a popen() replacement with bounded capture.
 *
 * popen("cmd", "r") runs a shell and hands you a FILE to read for as long
 * as the command writes: a chatty command can fill your memory, and a
 * command that writes to stderr or waits for input is your problem.
 * capture() below runs an argv (no shell), feeds it an optional input,
 * keeps at most LIMIT bytes of its stdout, the first and the last half
 * of them, and says how much was left out. Its stderr is captured on
 * its own, with the same bound. A deadline stops a command that hangs.
 *
 * Build: cc popen.c -lforkless        Run: ./popen
 */
#include <forkless.h>

#include <stdio.h>
#include <string.h>

#define LIMIT 64               /* bytes of stdout kept: 32 of the head, 32 of the tail */
#define HALF (LIMIT / 2)

/* The head of the output, kept by a callback that sees every byte as it
 * comes (the library keeps the tail in a ring of its own). */
struct head {
    char buf[HALF + 1];
    size_t len;
};

static int keep_head(void *ctx, int stream, const char *data, size_t len)
{
    struct head *h = ctx;
    (void)stream;                 /* 1: stdout (2 would be stderr) */
    size_t room = HALF - h->len;
    size_t n = len < room ? len : room;
    memcpy(h->buf + h->len, data, n);
    h->len += n;
    h->buf[h->len] = '\0';
    return 0;                     /* non-zero would stop the child */
}

/* Prints LABEL, then the alen bytes at a and the blen at b joined, in
 * quotes, on one line: a newline is shown as \n, a NUL as \0 (output is
 * bytes, not a C string: use the lengths). */
static void show(const char *label, const char *a, size_t alen, const char *b, size_t blen)
{
    const char *parts[2] = { a, b };
    size_t lens[2] = { alen, blen };
    printf("  %s: \"", label);
    for (int i = 0; i < 2; i++)
        for (size_t k = 0; k < lens[i]; k++)
            if (parts[i][k] == '\n')
                fputs("\\n", stdout);
            else if (parts[i][k] == '\0')
                fputs("\\0", stdout);
            else
                putchar(parts[i][k]);
    printf("\"\n");
}

/* Runs argv with input on its stdin (NULL: none), prints the head and the
 * tail of its stdout, its stderr and its status. Returns 0, or -1 when it
 * could not be run. */
static int capture(char *const argv[], const char *input)
{
    /* Without input, stdin is /dev/null: the child must not read ours. */
    struct fl_cmd cmd = { .argv = argv };
    if (!input)
        cmd.stdio[0].kind = FL_NULL;
    struct head head = { .len = 0 };
    struct fl_io io = {
        .input = input,
        .input_len = input ? strlen(input) : 0,
        .out = {
            /* stdout: the last HALF bytes in the result (a ring), the
             * first HALF bytes through keep_head(); the rest is counted,
             * read and dropped, so the child never blocks on a full pipe. */
            [0] = { .capture = true, .limit = HALF, .overflow = FL_OVERFLOW_KEEP_TAIL,
                    .on_output = keep_head, .ctx = &head },
            /* stderr: the first LIMIT bytes. */
            [1] = { .capture = true, .limit = LIMIT, .overflow = FL_OVERFLOW_KEEP_HEAD },
        },
        /* 10 s for the whole exchange, then SIGTERM, and SIGKILL 1 s later. */
        .timeout_ms = 10000,
        .stop = &(struct fl_stop_policy){ .grace_ms = 1000 },
    };
    struct fl_result res = { 0 };   /* zero: safe to free whatever fails */
    struct fl_error err;
    char msg[512];

    printf("$ %s%s\n", argv[0], input ? " (with input)" : "");
    /* fl_run() feeds stdin and drains both outputs at once, so no size of
     * input or output can deadlock, then reaps the child. */
    int rc = fl_run(&cmd, &io, &res, &err);
    if (rc != 0) {
        /* A failure with a step is the spawn's (nothing ran). Without one
         * the child ran and was stopped and reaped, but the exchange failed
         * (ENOMEM, an errno of poll(), read(), write() or waitid()): *error
         * is clear, and the result is filled and owns what was kept. */
        if (err.step != FL_STEP_NONE)
            printf("  not run: %s\n", fl_error_format(&err, msg, sizeof msg));
        else
            printf("  failed: %s\n", strerror(rc));
        fl_result_free(&res);
        return -1;
    }

    const struct fl_output *out = &res.out[0];
    printf("  stdout: %llu bytes\n", out->total);
    if (out->total <= HALF) {
        /* Short output: the ring holds all of it. */
        show("all of it", out->data, out->len, NULL, 0);
    } else if (out->total <= LIMIT) {
        /* Fits in LIMIT: the head and the tail overlap, print them joined. */
        size_t rest = (size_t)out->total - HALF;
        show("all of it", head.buf, head.len, out->data + (out->len - rest), rest);
    } else {
        show("head", head.buf, head.len, NULL, 0);
        printf("  ... %llu bytes left out ...\n", out->total - HALF - out->len);
        show("tail", out->data, out->len, NULL, 0);
    }
    if (res.out[1].total)
        show(res.out[1].overflowed ? "stderr (truncated)" : "stderr", res.out[1].data,
             res.out[1].len, NULL, 0);
    if (res.timed_out)
        printf("  timed out: stopped with signal %d\n", res.stop_signal);
    printf("  status %d\n", fl_result_shell_status(&res));
    /* The result owns the buffers of the captured outputs. */
    fl_result_free(&res);
    return 0;
}

int main(void)
{
    /* 588895 bytes of output, of which 64 are kept. */
    capture((char *const[]){ "seq", "1", "100000", NULL }, NULL);
    /* Input in, output back: popen()'s "w" and "r" at once. */
    capture((char *const[]){ "tr", "a-z", "A-Z", NULL }, "hello, world\n");
    /* stderr apart from stdout, and the exit code. */
    capture((char *const[]){ "ls", "/no/such/dir", NULL }, NULL);
    return 0;
}
