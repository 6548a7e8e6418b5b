/* consumer.c: a program outside the forkless tree, built against an
 * installed forkless (pkg-config, pkg-config --static, CMake
 * find_package) by scripts/check-install.sh and scripts/check-package.sh.
 * It checks what it sees and exits 0 only if every check holds.
 *
 * -DEXPECT_VERSION='"X.Y.Z"': the version the build expects; the header's
 * FL_VERSION_STRING must be that one. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <forkless.h>

static int failures;

#define CHECK(cond, ...)                                      \
    do {                                                      \
        if (!(cond)) {                                        \
            fprintf(stderr, "consumer: FAIL %s: ", #cond);    \
            fprintf(stderr, __VA_ARGS__);                     \
            fputc('\n', stderr);                              \
            failures++;                                       \
        }                                                     \
    } while (0)

/* /bin/echo hello, with its stdout on a pipe: reads "hello\n" and exit 0. */
static void check_echo(void)
{
    struct fl_cmd cmd = {
        .argv = (char *const[]){ "/bin/echo", "hello", NULL },
        .stdio = { [1] = { .kind = FL_PIPE } },
    };
    struct fl_proc proc;
    struct fl_error error;
    int r = fl_spawn(&cmd, &proc, &error);
    if (r != 0) {
        char buf[1400];
        CHECK(r == 0, "fl_spawn(/bin/echo): %s", fl_error_format(&error, buf, sizeof buf));
        return;
    }
    char out[64];
    size_t len = 0;
    for (;;) {
        ssize_t n = read(proc.stdio[1], out + len, sizeof out - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        if (len == sizeof out - 1)
            break;
    }
    out[len] = '\0';
    int status = -1;
    r = fl_wait(&proc, 10000, &status);
    CHECK(r == 0, "fl_wait: %s", strerror(r));
    CHECK(r != 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
          "/bin/echo ended with wait status %#x", (unsigned)status);
    CHECK(strcmp(out, "hello\n") == 0, "/bin/echo wrote \"%s\"", out);
    printf("consumer: /bin/echo hello through %s: \"hello\", exit 0\n",
           fl_backend_name(proc.backend));
    fl_close(&proc);
}

/* A program that does not exist: ENOENT from fl_spawn() itself, at step
 * exec, with the path in the error. */
static void check_missing(void)
{
    const char *missing = "/nonexistent/forkless-consumer-no-such-program";
    struct fl_cmd cmd = {
        .argv = (char *const[]){ (char *)missing, NULL },
    };
    struct fl_proc proc;
    struct fl_error error;
    int r = fl_spawn(&cmd, &proc, &error);
    CHECK(r == ENOENT, "fl_spawn(missing) returned %d (%s)", r, strerror(r));
    if (r == 0) {
        fl_wait(&proc, 10000, NULL);
        fl_close(&proc);
        return;
    }
    CHECK(error.err == ENOENT, "error.err %d", error.err);
    CHECK(error.step == FL_STEP_EXEC, "error.step %s", fl_step_name(error.step));
    CHECK(strcmp(fl_step_name(error.step), "exec") == 0, "step name \"%s\"",
          fl_step_name(error.step));
    CHECK(strcmp(error.path, missing) == 0, "error.path \"%s\"", error.path);
    char buf[1400];
    printf("consumer: missing program: %s\n", fl_error_format(&error, buf, sizeof buf));
}

int main(void)
{
    printf("consumer: forkless.h FL_VERSION_STRING %s\n", FL_VERSION_STRING);
#ifdef EXPECT_VERSION
    CHECK(strcmp(FL_VERSION_STRING, EXPECT_VERSION) == 0, "expected version %s",
          EXPECT_VERSION);
#endif
#if FL_VERSION_MAJOR > 0 || FL_VERSION_MINOR >= 2
    /* fl_version() (0.2.0 on): the library that runs, not the header. */
    printf("consumer: fl_version() %s\n", fl_version());
    CHECK(strcmp(fl_version(), FL_VERSION_STRING) == 0, "fl_version() is %s", fl_version());
#endif
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", FL_VERSION_MAJOR, FL_VERSION_MINOR, FL_VERSION_PATCH);
    CHECK(strcmp(v, FL_VERSION_STRING) == 0, "FL_VERSION_MAJOR.MINOR.PATCH is %s", v);
    check_echo();
    check_missing();
    if (failures) {
        fprintf(stderr, "consumer: %d check(s) failed\n", failures);
        return 1;
    }
    printf("consumer: all checks passed\n");
    return 0;
}
