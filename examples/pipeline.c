/*
 * pipeline.c: a | b | c without a shell, with the status of every stage.
 *
 * A shell reports only the last stage's status (or, with `set -o
 * pipefail`, the rightmost failure). fl_pipeline_run() connects the
 * stages' stdout to the next stdin with pipes (the data never passes
 * through the caller), puts them in one new process group, and returns
 * one struct fl_result per stage: exit code or signal, CPU time, and,
 * here, the last stage's stdout.
 *
 * Build: cc pipeline.c -lforkless        Run: ./pipeline
 */
#include <forkless.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>

#define MAX_STAGES 8

/* Runs the n stages (n <= MAX_STAGES) with the last stage's stdout
 * captured, then prints it, each stage's status and what pipefail says. */
static void run(const char *title, const struct fl_cmd *stages, size_t n)
{
    struct fl_result res[MAX_STAGES] = { 0 };   /* zero: safe to free whatever fails */
    struct fl_error err;
    char msg[512];

    printf("%s\n", title);
    /* out[0] is the last stage's stdout: keep up to 4 KiB of it. The whole
     * pipeline has 10 s, then SIGTERM goes to its process group. */
    struct fl_io io = {
        .out = { [0] = { .capture = true, .limit = 4096 } },
        .timeout_ms = 10000,
    };
    int rc = fl_pipeline_run(stages, n, &io, res, &err);
    if (rc != 0) {
        if (err.step != FL_STEP_NONE)
            /* A stage that cannot start names itself, e.g.
             *   stage 2: exec "nope": No such file or directory (not found in PATH)
             * and the stages already started are killed and reaped. */
            printf("  not run: %s\n", fl_error_format(&err, msg, sizeof msg));
        else
            /* Every stage started, but the exchange or the wait failed:
             * *error is clear, the stages are stopped and reaped, and the
             * results hold what was kept. */
            printf("  failed: %s\n", strerror(rc));
        for (size_t k = 0; k < n; k++)
            fl_result_free(&res[k]);
        return;
    }

    /* The last stage's output: bytes, out->len of them (a NUL among them
     * would end a "%s"), and more than the limit is cut, which says so. */
    const struct fl_output *out = &res[n - 1].out[0];
    printf("  output: ");
    if (!out->len)
        printf("(none)\n");
    fwrite(out->data, 1, out->len, stdout);
    if (out->len && out->data[out->len - 1] != '\n')
        printf(out->overflowed ? "\n" : " (no newline at the end)\n");
    if (out->overflowed)
        printf("  (cut: %llu bytes more, not kept)\n", out->total - out->len);

    for (size_t k = 0; k < n; k++) {
        printf("  stage %zu %-6s ", k + 1, stages[k].argv[0]);
        if (res[k].signal)
            printf("killed by %s%s\n", strsignal(res[k].signal),
                   /* a writer whose reader quit early: usually harmless */
                   res[k].signal == SIGPIPE ? " (its reader had quit)" : "");
        else
            printf("exit %d\n", res[k].exit_code);
    }

    /* As bash's `set -o pipefail`: the rightmost stage that failed. */
    int failed = fl_pipefail(res, n);
    if (failed < 0)
        printf("  pipefail: every stage succeeded\n");
    else
        printf("  pipefail: stage %d failed, status %d\n", failed + 1,
               fl_result_shell_status(&res[failed]));

    for (size_t k = 0; k < n; k++)
        fl_result_free(&res[k]);
}

/* A stage is a plain struct fl_cmd: stdin and stdout are left zero
 * (FL_INHERIT), since the pipes take their place. */
#define STAGE(...) { .argv = (char *const[]){ __VA_ARGS__, NULL } }

int main(void)
{
    /* seq 1 100 | grep 7 | wc -l: every stage exits 0. */
    run("seq 1 100 | grep 7 | wc -l", (struct fl_cmd[]){
        STAGE("seq", "1", "100"), STAGE("grep", "7"), STAGE("wc", "-l") }, 3);

    /* grep finds nothing and exits 1; wc still succeeds, so a shell without
     * pipefail would call this a success. */
    run("seq 1 5 | grep 9 | wc -l", (struct fl_cmd[]){
        STAGE("seq", "1", "5"), STAGE("grep", "9"), STAGE("wc", "-l") }, 3);

    /* head quits after one line; yes, writing on, is killed by SIGPIPE
     * (forkless gives every child the default SIGPIPE, whatever ours is). */
    run("yes | head -n 1", (struct fl_cmd[]){
        STAGE("yes"), STAGE("head", "-n", "1") }, 2);

    /* A stage that cannot start: nothing runs. */
    run("echo hi | no-such-filter", (struct fl_cmd[]){
        STAGE("echo", "hi"), STAGE("no-such-filter") }, 2);
    return 0;
}
