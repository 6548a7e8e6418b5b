/* peer_glib.c HEAP_MIB N TARGET: the GLib peer of `forkless bench peers`.
 * Allocates and touches a heap of HEAP_MIB MiB (g_malloc, one write every
 * 4096 bytes), spawns and waits for TARGET with g_spawn_sync() (stdio
 * inherited) 3 times untimed, then N times timed. Prints
 * "# version glib X.Y.Z", then one line per timed spawn: its microseconds. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void run(char *target)
{
    char *args[] = { target, NULL };
    GError *err = NULL;
    gint status = 0;
    if (!g_spawn_sync(NULL, args, NULL, G_SPAWN_CHILD_INHERITS_STDIN, NULL, NULL,
                      NULL, NULL, &status, &err)) {
        fprintf(stderr, "peer_glib: g_spawn_sync %s: %s\n", target, err->message);
        exit(1);
    }
    if (!g_spawn_check_wait_status(status, &err)) {
        fprintf(stderr, "peer_glib: %s: %s\n", target, err->message);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("glib %u.%u.%u\n", glib_major_version, glib_minor_version,
               glib_micro_version);
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: peer_glib HEAP_MIB N TARGET\n");
        return 2;
    }
    size_t bytes = (size_t)strtoul(argv[1], NULL, 10) << 20;
    long n = strtol(argv[2], NULL, 10);
    volatile char *heap = g_malloc(bytes ? bytes : 1);
    for (size_t i = 0; i < bytes; i += 4096)
        heap[i] = 1;
    for (int k = 0; k < 3; k++)
        run(argv[3]);
    double *us = g_malloc(sizeof *us * (size_t)(n > 0 ? n : 1));
    for (long k = 0; k < n; k++) {
        double t0 = now_us();
        run(argv[3]);
        us[k] = now_us() - t0;
    }
    printf("# version glib %u.%u.%u\n", glib_major_version, glib_minor_version,
           glib_micro_version);
    for (long k = 0; k < n; k++)
        printf("%.3f\n", us[k]);
    g_free(us);
    g_free((void *)heap);
    return 0;
}
