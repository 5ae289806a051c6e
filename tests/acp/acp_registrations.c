/* 255 live registrations per process, reached by every other process
 * through a cache of registration tables kept small here
 * (LEANMPI_ACP_CACHE=2 in the test), so that tables are evicted and
 * fetched again; a registration that is gone is refused to others at
 * once, and its entry's successor is not reached through the old address.
 * MPI and ACP are both started (MPI first, or ACP first where
 * ACP_TEST_ORDER=acp-first), and the cache's counters are read through MPI_T. */
#include "acptest.h"
#include "mpitest.h"
#include <stdint.h>

#define REGS 255
#define WORDS 4

static unsigned long long pvar(const char *name)
{
    unsigned long long v = mt_read_pvar(name);
    ACHECK(v != ~0ull, "MPI_T variable %s", name);
    return v;
}

int main(int argc, char **argv)
{
    const char *order = getenv("ACP_TEST_ORDER");
    int acp_first = order && !strcmp(order, "acp-first");
    if (acp_first) ACHECK(acp_init(&argc, &argv) == 0, "acp_init");
    MPI_Init(&argc, &argv);
    if (!acp_first) ACHECK(acp_init(&argc, &argv) == 0, "acp_init");
    at_rank = acp_rank();
    int me = acp_rank(), n = acp_procs(), wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    ACHECK_EQ(me, wrank);

    uint64_t *mem[REGS];
    acp_atkey_t key[REGS];
    acp_ga_t *gas = (acp_ga_t *)(at_starter() + 1024); /* published: REGS addresses */
    for (int r = 0; r < REGS; r++) {
        mem[r] = malloc(WORDS * sizeof(uint64_t));
        for (int w = 0; w < WORDS; w++) mem[r][w] = (uint64_t)me << 32 | (uint64_t)r << 8 | (uint64_t)w;
        key[r] = acp_register_memory(mem[r], WORDS * sizeof(uint64_t), r % acp_colors());
        ACHECK(key[r] != ACP_ATKEY_NULL, "registration %d", r);
        gas[r] = acp_query_ga(key[r], mem[r]);
    }
    uint64_t extra;
    ACHECK(acp_register_memory(&extra, 8, 0) == ACP_ATKEY_NULL, "a 256th live registration is refused");
    MPI_Barrier(MPI_COMM_WORLD); /* MPI's barrier orders ACP's memory too */

    /* every other process's every registration, processes in turn so that
     * a cache of 2 tables keeps evicting */
    uint64_t *into = malloc(WORDS * sizeof(uint64_t));
    acp_atkey_t ikey = acp_register_memory(into, WORDS * sizeof(uint64_t), 0);
    ACHECK(ikey == ACP_ATKEY_NULL, "no room for a 256th registration");
    acp_ga_t land = acp_query_starter_ga(me) + 8192;
    acp_ga_t their[REGS];
    unsigned long long fetches0 = pvar("onesided_table_fetches"), evictions0 = pvar("onesided_table_evictions");
    for (int round = 0; round < 2; round++)
        for (int r = 0; r < REGS; r++)
            for (int p = 1; p < n; p++) {
                int peer = (me + p) % n;
                if (round == 0 && p == 1) {
                    acp_complete(acp_copy(land, acp_query_starter_ga(peer) + 1024 + 8 * r, 8, 0));
                    memcpy(&their[r], at_starter() + 8192, 8);
                }
                acp_ga_t src;
                acp_complete(acp_copy(land, acp_query_starter_ga(peer) + 1024 + 8 * r, 8, 0));
                memcpy(&src, at_starter() + 8192, 8);
                ACHECK_EQ(acp_query_rank(src), peer);
                ACHECK(acp_copy(land, src, WORDS * 8, 0) != (acp_handle_t)ACP_HANDLE_NULL, "copy from %d/%d", peer, r);
                acp_complete(ACP_HANDLE_ALL);
                for (int w = 0; w < WORDS; w++) {
                    uint64_t v;
                    memcpy(&v, at_starter() + 8192 + 8 * w, 8);
                    ACHECK_EQ(v, (uint64_t)peer << 32 | (uint64_t)r << 8 | (uint64_t)w);
                }
            }
    unsigned long long fetches = pvar("onesided_table_fetches") - fetches0,
                       evictions = pvar("onesided_table_evictions") - evictions0;
    if (n > 3) {
        /* 3+ peers in turn through 2 cached tables: refetched all along */
        ACHECK(evictions > 0 && fetches > (unsigned long long)(n - 1), "fetches %llu evictions %llu", fetches,
               evictions);
    } else if (n > 1) {
        /* 1 or 2 peers: each table fetched once, never evicted */
        ACHECK(fetches == (unsigned long long)(n - 1) && evictions == 0, "fetches %llu evictions %llu", fetches,
               evictions);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* a registration that goes: others' copies from it fail at once */
    ACHECK(acp_unregister_memory(key[7]) == 0, "unregister");
    MPI_Barrier(MPI_COMM_WORLD);
    acp_ga_t old = ACP_GA_NULL;
    if (n > 1) {
        int peer = (me + 1) % n;
        acp_complete(acp_copy(land, acp_query_starter_ga(peer) + 1024 + 8 * 7, 8, 0));
        memcpy(&old, at_starter() + 8192, 8);
        ACHECK(acp_copy(land, old, 8, 0) == (acp_handle_t)ACP_HANDLE_NULL,
               "a copy from a registration that is gone must fail");
        ACHECK(acp_copy(land, their[8], 8, 0) != (acp_handle_t)ACP_HANDLE_NULL, "its neighbour entry still serves");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* the only free entry serves the next registration: the old address
     * (same color) then reaches it, as documented */
    uint64_t tenant[WORDS] = {0xdead, 0xdead, 0xdead, 0xdead};
    acp_atkey_t tkey = acp_register_memory(tenant, sizeof tenant, 7 % acp_colors());
    ACHECK(tkey != ACP_ATKEY_NULL && acp_query_ga(tkey, tenant) == gas[7], "the entry is taken again");
    MPI_Barrier(MPI_COMM_WORLD);
    if (n > 1) {
        ACHECK(acp_copy(land, old, 8, 0) != (acp_handle_t)ACP_HANDLE_NULL, "the entry's new registration serves");
        acp_complete(ACP_HANDLE_ALL);
        uint64_t v;
        memcpy(&v, at_starter() + 8192, 8);
        ACHECK_EQ(v, 0xdead);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < REGS; r++)
        if (r != 7) ACHECK(acp_unregister_memory(key[r]) == 0, "unregister %d", r);
    acp_unregister_memory(tkey);
    /* either order of the ends, too */
    if (acp_first) {
        MPI_Finalize();
        ACHECK(acp_finalize() == 0, "acp_finalize");
    } else {
        ACHECK(acp_finalize() == 0, "acp_finalize");
        MPI_Finalize();
    }
    for (int r = 0; r < REGS; r++) free(mem[r]);
    free(into);
    printf("PASS acp_registrations rank %d of %d (%llu table fetches, %llu evictions)\n", me, n, fetches, evictions);
    return 0;
}
