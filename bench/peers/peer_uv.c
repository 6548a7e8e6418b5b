/* peer_uv.c HEAP_MIB N TARGET: the libuv peer of `forkless bench peers`.
 * Allocates and touches a heap of HEAP_MIB MiB (malloc, one write every 4096
 * bytes), spawns TARGET with uv_spawn() and runs the loop until its exit
 * callback, 3 times untimed, then N times timed. Prints
 * "# version libuv X.Y.Z", then one line per timed spawn: its microseconds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

static int64_t exit_status = -1;
static int term_signal;

static void on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
    exit_status = status;
    term_signal = sig;
    uv_close((uv_handle_t *)p, NULL);
}

static void run(uv_loop_t *loop, char *target)
{
    char *args[] = { target, NULL };
    uv_stdio_container_t stdio[3] = {
        { .flags = UV_INHERIT_FD, .data.fd = 0 },
        { .flags = UV_INHERIT_FD, .data.fd = 1 },
        { .flags = UV_INHERIT_FD, .data.fd = 2 },
    };
    uv_process_options_t o = { .exit_cb = on_exit_cb, .file = target,
                               .args = args, .stdio_count = 3, .stdio = stdio };
    uv_process_t p;
    exit_status = -1;
    int r = uv_spawn(loop, &p, &o);
    if (r) {
        fprintf(stderr, "peer_uv: uv_spawn %s: %s\n", target, uv_strerror(r));
        exit(1);
    }
    uv_run(loop, UV_RUN_DEFAULT);
    if (exit_status != 0 || term_signal) {
        fprintf(stderr, "peer_uv: %s exited %lld signal %d\n", target,
                (long long)exit_status, term_signal);
        exit(1);
    }
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("libuv %s\n", uv_version_string());
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: peer_uv HEAP_MIB N TARGET\n");
        return 2;
    }
    size_t bytes = (size_t)strtoul(argv[1], NULL, 10) << 20;
    long n = strtol(argv[2], NULL, 10);
    volatile char *heap = malloc(bytes ? bytes : 1);
    if (!heap) {
        perror("peer_uv: malloc");
        return 1;
    }
    for (size_t i = 0; i < bytes; i += 4096)
        heap[i] = 1;
    uv_loop_t *loop = uv_default_loop();
    for (int k = 0; k < 3; k++)
        run(loop, argv[3]);
    double *us = malloc(sizeof *us * (size_t)(n > 0 ? n : 1));
    for (long k = 0; k < n; k++) {
        double t0 = now_us();
        run(loop, argv[3]);
        us[k] = now_us() - t0;
    }
    printf("# version libuv %s\n", uv_version_string());
    for (long k = 0; k < n; k++)
        printf("%.3f\n", us[k]);
    free(us);
    free((void *)heap);
    return 0;
}
