/* Every ACP atomic at 4 and 8 bytes, on starter memory (CPU atomics on the
 * node's mapping) and on registered memory (under the owner's atomic
 * lock), with every process updating rank 0's values at once: the totals
 * and the old values returned must show that no update was lost. */
#include "acptest.h"
#include <stdint.h>

#define K 300

/* rank 0's targets: starter memory offsets 0 (8 bytes) and 8 (4 bytes), and
 * the same in its registered buffer; results go to my starter at 64 */
static acp_ga_t target8[2], target4[2];

static uint64_t fetch(acp_handle_t h, int width)
{
    ACHECK(h != (acp_handle_t)ACP_HANDLE_NULL, "atomic issued");
    acp_complete(h);
    unsigned char *r = at_starter() + 64;
    if (width == 4) {
        uint32_t v;
        memcpy(&v, r, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, r, 8);
    return v;
}

static uint64_t value_at(acp_ga_t ga, int width)
{
    /* read through a copy, like any process would */
    acp_ga_t into = acp_query_starter_ga(acp_rank()) + 128;
    acp_complete(acp_copy(into, ga, (size_t)width, ACP_HANDLE_NULL));
    uint64_t v = 0;
    memcpy(&v, at_starter() + 128, (size_t)width);
    return v;
}

/* Process 0 sets the value at t to 0; everyone waits for it. */
static void clear(acp_ga_t t, int width, int me)
{
    if (me == 0) {
        uint64_t zero = 0;
        memcpy(at_starter() + 128, &zero, 8);
        acp_complete(acp_copy(t, acp_query_starter_ga(0) + 128, (size_t)width, 0));
    }
    acp_sync();
}

int main(int argc, char **argv)
{
    ACHECK(acp_init(&argc, &argv) == 0, "acp_init");
    at_rank = acp_rank();
    int me = acp_rank(), n = acp_procs();
    acp_ga_t res = acp_query_starter_ga(me) + 64;
    uint64_t *reg = aligned_alloc(64, 64);
    memset(reg, 0, 64);
    acp_atkey_t key = acp_register_memory(reg, 64, 0);
    ACHECK(key != ACP_ATKEY_NULL, "register");
    acp_ga_t rga = acp_query_ga(key, reg);
    memcpy(at_starter() + 256, &rga, 8);
    acp_sync();
    acp_ga_t s0 = acp_query_starter_ga(0);
    acp_complete(acp_copy(acp_query_starter_ga(me) + 264, s0 + 256, 8, ACP_HANDLE_NULL));
    acp_ga_t r0;
    memcpy(&r0, at_starter() + 264, 8);
    target8[0] = s0;
    target4[0] = s0 + 8;
    target8[1] = r0;
    target4[1] = r0 + 8;

    /* bad input first: misaligned targets, a result in another process */
    ACHECK(acp_add8(res, target8[0] + 4, 1, ACP_HANDLE_NULL) == (acp_handle_t)ACP_HANDLE_NULL, "misaligned add8");
    ACHECK(acp_add4(res, target4[1] + 2, 1, ACP_HANDLE_NULL) == (acp_handle_t)ACP_HANDLE_NULL, "misaligned add4");
    ACHECK(acp_add8(res + 1, target8[0], 1, ACP_HANDLE_NULL) == (acp_handle_t)ACP_HANDLE_NULL, "misaligned result");
    if (n > 1)
        ACHECK(acp_swap8(acp_query_starter_ga((me + 1) % n) + 64, target8[0], 1, ACP_HANDLE_NULL) ==
                   (acp_handle_t)ACP_HANDLE_NULL,
               "a result in another process's memory");

    for (int where = 0; where < 2; where++) {
        /* fetch-and-add: old values strictly grow, the total is n * K */
        for (int width = 4; width <= 8; width += 4) {
            acp_ga_t t = width == 4 ? target4[where] : target8[where];
            uint64_t last = 0;
            for (int k = 0; k < K; k++) {
                uint64_t old = fetch(
                    width == 4 ? acp_add4(res, t, 1, ACP_HANDLE_NULL) : acp_add8(res, t, 1, ACP_HANDLE_NULL), width);
                ACHECK(old < (uint64_t)n * K && (k == 0 || old > last), "add old value %llu after %llu",
                       (unsigned long long)old, (unsigned long long)last);
                last = old;
            }
            acp_sync();
            ACHECK_EQ(value_at(t, width), (uint64_t)n * K);
            acp_sync();
            /* compare-and-swap increments: K successes each */
            uint64_t expect = value_at(t, width);
            for (int k = 0; k < K;) {
                uint64_t old = fetch(width == 4 ? acp_cas4(res, t, (uint32_t)expect, (uint32_t)expect + 1, 0)
                                                : acp_cas8(res, t, expect, expect + 1, 0),
                                     width);
                if (old == expect) k++;
                expect = old == expect ? expect + 1 : old;
            }
            acp_sync();
            ACHECK_EQ(value_at(t, width), (uint64_t)2 * n * K);
            acp_sync();
            /* swap: the old values and the last value are 2nK, then each
             * process's me + 1, each seen exactly once */
            uint64_t old = fetch(width == 4 ? acp_swap4(res, t, (uint32_t)me + 1, 0) : acp_swap8(res, t, me + 1, 0),
                                 width);
            memcpy(at_starter() + 512, &old, 8);
            acp_sync();
            if (me == 0) {
                uint64_t seen[64] = {0}, start = 0;
                for (int r = 0; r <= n; r++) {
                    uint64_t v = r < n ? 0 : value_at(t, width);
                    if (r < n) {
                        acp_complete(acp_copy(acp_query_starter_ga(0) + 600, acp_query_starter_ga(r) + 512, 8, 0));
                        memcpy(&v, at_starter() + 600, 8);
                    }
                    if (v == (uint64_t)2 * n * K) start++;
                    else if (v >= 1 && v <= (uint64_t)n) seen[v]++;
                    else ACHECK(0, "swap value %llu", (unsigned long long)v);
                }
                ACHECK_EQ(start, 1);
                for (int r = 1; r <= n; r++) ACHECK_EQ(seen[r], 1);
            }
            acp_sync();
            /* or, xor, and: one bit per process */
            clear(t, width, me);
            uint64_t bit = (uint64_t)1 << me;
            fetch(width == 4 ? acp_or4(res, t, (uint32_t)bit, 0) : acp_or8(res, t, bit, 0), width);
            acp_sync();
            uint64_t all = n >= 64 ? UINT64_MAX : (((uint64_t)1 << n) - 1);
            ACHECK_EQ(value_at(t, width), all);
            acp_sync();
            fetch(width == 4 ? acp_xor4(res, t, (uint32_t)(bit | bit << 16), 0) : acp_xor8(res, t, bit | bit << 32, 0),
                  width);
            acp_sync();
            ACHECK_EQ(value_at(t, width), all << (width == 4 ? 16 : 32) & (width == 4 ? UINT32_MAX : UINT64_MAX));
            acp_sync();
            fetch(width == 4 ? acp_and4(res, t, ~(uint32_t)(bit << 16), 0) : acp_and8(res, t, ~(bit << 32), 0), width);
            acp_sync();
            ACHECK_EQ(value_at(t, width), 0);
            acp_sync();
            clear(t, width, me);
        }
    }
    acp_unregister_memory(key);
    ACHECK(acp_finalize() == 0, "acp_finalize");
    free(reg);
    printf("PASS acp_atomics rank %d of %d\n", me, n);
    return 0;
}
