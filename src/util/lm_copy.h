/* Copies of a few bytes, the common case of message headers and small
 * messages: up to 32 bytes in line with overlapping word moves (no call,
 * no length dispatch in libc), the rest through memcpy. */
#ifndef LM_COPY_H
#define LM_COPY_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void lm_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    uint64_t a, b, c, e;
    if (n >= 8 && n <= 16) {
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n > 16 && n <= 32) {
        memcpy(&a, s, 8);
        memcpy(&b, s + 8, 8);
        memcpy(&c, s + n - 16, 8);
        memcpy(&e, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + 8, &b, 8);
        memcpy(d + n - 16, &c, 8);
        memcpy(d + n - 8, &e, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t x, y;
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        memcpy(d, &x, 4);
        memcpy(d + n - 4, &y, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++) d[i] = s[i];
    } else {
        memcpy(d, s, n);
    }
}

/* Zeroing of a few hundred bytes whose size the compiler knows (objects
 * reused from a free list): in 16-byte stores. A memset of such a size
 * becomes a `rep stos`, whose start-up cost most of what taking a request
 * for MPI_Irecv cost in a stream of 1-byte messages (perf: 30% of the
 * receiver's time on the 2-core machine). Larger or unknown sizes: memset. */
static inline void lm_zero(void *p, size_t n)
{
    typedef unsigned char zero16 __attribute__((vector_size(16)));
    if (!__builtin_constant_p(n) || n > 512) {
        memset(p, 0, n);
        return;
    }
    const zero16 z = {0};
    size_t i = 0;
    /* unrolled before the compiler could turn the loop into a memset */
#pragma GCC unroll 32
    for (; i + sizeof z <= n; i += sizeof z) __builtin_memcpy((unsigned char *)p + i, &z, sizeof z);
    for (; i < n; i++) ((unsigned char *)p)[i] = 0;
}

#endif
