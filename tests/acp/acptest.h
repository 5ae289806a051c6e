/* Self-checking helpers of the ACP tests: a failed check prints
 * "FAIL file:line [rank R] what" and ends the whole job (acp_abort), so
 * that no process is left waiting for one that failed. */
#ifndef LEANMPI_TESTS_ACPTEST_H
#define LEANMPI_TESTS_ACPTEST_H
#include <acp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int at_rank = -1;

#define ACHECK(cond, ...)                                                                                  \
    do {                                                                                                   \
        if (!(cond)) {                                                                                     \
            char at_m_[512];                                                                               \
            snprintf(at_m_, sizeof at_m_, __VA_ARGS__);                                                    \
            fprintf(stderr, "FAIL %s:%d [rank %d] '%s': %s\n", __FILE__, __LINE__, at_rank, #cond, at_m_); \
            fflush(stdout);                                                                                \
            fflush(stderr);                                                                                \
            if (at_rank >= 0) acp_abort("a check failed");                                                 \
            exit(1);                                                                                       \
        }                                                                                                  \
    } while (0)

#define ACHECK_EQ(a, b)                                                                       \
    do {                                                                                      \
        unsigned long long at_a_ = (unsigned long long)(a), at_b_ = (unsigned long long)(b);  \
        ACHECK(at_a_ == at_b_, "%s = %llu (0x%llx), expected %llu", #a, at_a_, at_a_, at_b_); \
    } while (0)

/* This process's starter memory. */
static inline unsigned char *at_starter(void) { return acp_query_address(acp_query_starter_ga(acp_rank())); }

#endif
