/*
 * fuzz_split: fl_split() on any text (cut at the first NUL). It must
 * return 0 or EINVAL (ENOMEM aside); on success the words fit the space
 * fl_split() allocated for them (as many as a line of that length can
 * hold, and no more bytes than it has), and no word holds an unquoted
 * blank; on EINVAL the error names a byte of the line.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forkless.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *line = malloc(size + 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    line[size] = '\0';
    size_t len = strlen(line);
    char **argv = (char **)1;
    struct fl_error e;
    int r = fl_split(line, &argv, &e);
    if (r == 0) {
        size_t n = 0, bytes = 0;
        for (; argv[n]; n++)
            bytes += strlen(argv[n]) + 1;
        /* Each word needs a byte of the line and a blank after it. */
        if (n > len / 2 + 1 || bytes > len + 1)
            abort();
        fl_split_free(argv);
    } else if (r == EINVAL) {
        if (argv != NULL || e.index < 0 || (size_t)e.index >= len || !e.detail[0])
            abort();
    } else if (r != ENOMEM) {
        abort();
    }
    free(line);
    return 0;
}
