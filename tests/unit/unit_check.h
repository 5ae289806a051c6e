/* CHECK(c) for the unit tests: a failed condition prints where and what,
 * and the test exits 1. */
#ifndef LM_UNIT_CHECK_H
#define LM_UNIT_CHECK_H
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

#endif
