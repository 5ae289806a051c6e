/* Bad input gets an error return naming the call, on the calling process
 * only: the others go on and the job ends normally. */
#include "acptest.h"
#include <stdint.h>

int main(int argc, char **argv)
{
    ACHECK(acp_query_starter_ga(0) == ACP_GA_NULL && acp_register_memory(argv, 8, 0) == ACP_ATKEY_NULL &&
               acp_copy(1, 1, 1, 0) == (acp_handle_t)ACP_HANDLE_NULL && acp_colors() == -1,
           "calls before acp_init fail");
    ACHECK(acp_init(&argc, &argv) == 0, "acp_init");
    int me = acp_rank(), n = acp_procs();
    at_rank = me;
    acp_ga_t mine = acp_query_starter_ga(me);
    const acp_handle_t null = (acp_handle_t)ACP_HANDLE_NULL;
    if (me == n - 1) {
        /* null and unknown addresses */
        ACHECK(acp_copy(ACP_GA_NULL, mine, 8, 0) == null, "a null destination");
        ACHECK(acp_copy(mine, ACP_GA_NULL, 8, 0) == null, "a null source");
        ACHECK(acp_copy(mine, (acp_ga_t)(n + 5) << 44 | 8, 8, 0) == null, "a rank beyond the job");
        ACHECK(acp_copy(mine, mine | (acp_ga_t)9 << 34, 8, 0) == null, "an entry never registered");
        ACHECK(acp_query_address(mine | (acp_ga_t)9 << 34) == NULL, "query_address of an entry never registered");
        if (n > 1) ACHECK(acp_query_address(acp_query_starter_ga(0)) == NULL, "query_address of another's memory");
        /* past the end of a registration */
        static uint64_t words[4];
        acp_atkey_t key = acp_register_memory(words, sizeof words, 0);
        acp_ga_t ga = acp_query_ga(key, words);
        ACHECK(acp_copy(mine, ga + 8, 32, 0) == null, "a copy past the end of a registration");
        ACHECK(acp_copy(mine, ga + 8, 24, 0) != null, "a copy up to its end");
        /* misaligned atomics */
        ACHECK(acp_cas8(mine, ga + 4, 0, 1, 0) == null, "a misaligned cas8");
        ACHECK(acp_swap4(mine + 2, ga, 1, 0) == null, "a misaligned result");
        /* handles never issued, keys never issued, bad registrations */
        ACHECK(acp_copy(mine, mine + 8, 8, 123456) == null, "an order handle never issued");
        ACHECK(acp_copy(mine, mine + 8, 8, -7) == null, "a negative order handle");
        ACHECK(acp_unregister_memory(key + 1) == -1, "a key never issued");
        ACHECK(acp_unregister_memory(ACP_ATKEY_NULL) == -1, "ACP_ATKEY_NULL");
        ACHECK(acp_register_memory(NULL, 8, 0) == ACP_ATKEY_NULL, "a null region");
        ACHECK(acp_register_memory(words, 0, 0) == ACP_ATKEY_NULL, "an empty region");
        ACHECK(acp_register_memory(words, 8, acp_colors()) == ACP_ATKEY_NULL, "a color beyond acp_colors");
        ACHECK(acp_query_ga(key, words + 4) == ACP_GA_NULL, "an address outside the registration");
        ACHECK(acp_unregister_memory(key) == 0, "unregister");
    }
    /* everyone, the failing process included, goes on */
    uint64_t one = 1;
    memcpy(at_starter(), &one, 8);
    acp_complete(acp_add8(mine + 64, acp_query_starter_ga(0) + 128, 1, 0));
    ACHECK(acp_sync() == 0, "acp_sync after the errors");
    if (me == 0) {
        uint64_t total;
        memcpy(&total, at_starter() + 128, 8);
        ACHECK_EQ(total, (uint64_t)n);
    }
    ACHECK(acp_finalize() == 0, "acp_finalize");
    ACHECK(acp_finalize() == -1 && acp_copy(1, 1, 1, 0) == (acp_handle_t)ACP_HANDLE_NULL, "calls after finalize fail");
    printf("PASS acp_errors rank %d of %d\n", me, n);
    return 0;
}
