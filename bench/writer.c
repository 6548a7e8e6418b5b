/* writer.c: fl-writer MIB, the io suite's writer. Writes MIB MiB to stdout
 * from one 1 MiB buffer with large write()s (a short write goes on where
 * it stopped) and exits 0, or 1 with a message when a write fails. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (1u << 20)

static char buf[CHUNK];

int main(int argc, char **argv)
{
    char *end;
    unsigned long mib = argc == 2 ? strtoul(argv[1], &end, 10) : 0;
    if (argc != 2 || !*argv[1] || *end) {
        fprintf(stderr, "usage: fl-writer MIB\n");
        return 2;
    }
    memset(buf, 'x', sizeof buf);
    for (unsigned long i = 0; i < mib; i++) {
        for (size_t off = 0; off < CHUNK;) {
            ssize_t n = write(1, buf + off, CHUNK - off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                fprintf(stderr, "fl-writer: write: %s\n", n < 0 ? strerror(errno) : "0");
                return 1;
            }
            off += (size_t)n;
        }
    }
    return 0;
}
