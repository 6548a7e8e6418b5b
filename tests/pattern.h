/* pattern.h: the bytes the probe's "spew" writes, shared with the tests so
 * that they can check any stretch of a stream byte for byte. Byte i is a
 * hash of its offset: a chunk lost, doubled or moved shows. */
#ifndef FL_TEST_PATTERN_H
#define FL_TEST_PATTERN_H

#include <stddef.h>
#include <stdint.h>

static inline unsigned char fl_pattern_byte(uint64_t i)
{
    return (unsigned char)(((uint32_t)i * 2654435761u) >> 24);
}

static inline void fl_pattern_fill(unsigned char *p, uint64_t from, size_t n)
{
    for (size_t k = 0; k < n; k++)
        p[k] = fl_pattern_byte(from + k);
}

/* FNV-1a, 64 bits: what the probe's "drain" reports as "sum". */
static inline uint64_t fl_fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t k = 0; k < n; k++)
        h = (h ^ p[k]) * 1099511628211ULL;
    return h;
}
#define FL_FNV1A_INIT 14695981039346656037ULL

#endif
