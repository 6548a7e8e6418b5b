/* worker_main.c: fl-worker, the program the worker suite starts. It gets
 * the ring as an open fd (argv[1], 3 by default), consumes it to the end,
 * leaves the count and sum in the ring's header and exits 0. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "ring.h"

int main(int argc, char **argv)
{
    int fd = argc > 1 ? atoi(argv[1]) : 3;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        fprintf(stderr, "fl-worker: fd %d: %s\n", fd, strerror(errno));
        return 1;
    }
    if ((size_t)st.st_size < FL_RING_HDR) {
        fprintf(stderr, "fl-worker: fd %d is not a ring\n", fd);
        return 1;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "fl-worker: mmap: %s\n", strerror(errno));
        return 1;
    }
    struct fl_ring_hdr *h = p;
    if (h->magic != FL_RING_MAGIC || fl_ring_bytes(h->slots) > (size_t)st.st_size) {
        fprintf(stderr, "fl-worker: fd %d is not a ring\n", fd);
        return 1;
    }
    fl_ring_consume(h);
    return 0;
}
