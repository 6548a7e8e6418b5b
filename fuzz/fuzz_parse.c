/*
 * fuzz_parse: the strict value parsers of tools/parse.c. The first byte
 * picks the parser, the rest is the text (cut at the first NUL). Each must
 * return its documented codes, and on success give a value in range.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 256)
        return 0;
    char text[257];
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    int r;
    switch (data[0] % 7) {
    case 0: {
        int64_t ms = -1;
        r = parse_duration_ms(text, &ms);
        if (r != 0 && r != -1)
            abort();
        if (r == 0 && ms < 0)
            abort();
        /* Strict: no sign, no space, something numeric first. */
        if (r == 0 && (text[0] == '-' || text[0] == '+' || text[0] == ' '))
            abort();
        break;
    }
    case 1: {
        int fd = -1;
        r = parse_fd_number(text, &fd);
        if (r != 0 && r != -1)
            abort();
        if (r == 0 && (fd < 0 || strspn(text, "0123456789") != strlen(text)))
            abort();
        break;
    }
    case 2: {
        unsigned id = 0;
        r = parse_id(text, &id);
        if (r != 0 && r != -1)
            abort();
        if (r == 0 && id == UINT_MAX)
            abort();
        break;
    }
    case 3: {
        int c = -1, p = -1;
        r = parse_fd_map(text, &c, &p);
        if (r != 0 && r != -1)
            abort();
        if (r == 0 && (c < 0 || p < 0))
            abort();
        break;
    }
    case 4: {
        mode_t m = 01000;
        r = parse_umask(text, &m);
        if (r != 0 && r != -1)
            abort();
        if (r == 0 && m > 0777)
            abort();
        break;
    }
    case 5: {
        int res = rlimit_resource_by_name(text);
        if (res < -1 || res >= RLIM_NLIMITS)
            abort();
        break;
    }
    default: {
        int res = -1;
        rlim_t soft = 0, hard = 0;
        r = parse_rlimit(text, &res, &soft, &hard);
        if (r != 0 && r != -1 && r != -2)
            abort();
        if (r == 0 && (res < 0 || res >= RLIM_NLIMITS))
            abort();
        break;
    }
    }
    return 0;
}
