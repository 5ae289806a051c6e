/* acp_reset: registrations go, starter memory is cleared, and the
 * processes take the ranks they asked for (here the reverse order); ranks
 * that are not a permutation are refused on every process, which keeps its
 * rank. Copies and atomics work in the new numbering. */
#include "acptest.h"
#include <stdint.h>

int main(int argc, char **argv)
{
    ACHECK(acp_init(&argc, &argv) == 0, "acp_init");
    int me = acp_rank(), n = acp_procs();
    at_rank = me;
    static char buf[4096];
    acp_atkey_t key = acp_register_memory(buf, sizeof buf, 0);
    ACHECK(key != ACP_ATKEY_NULL, "register");
    memset(at_starter(), 0x5a, 4096);
    acp_sync();
    if (n > 1) {
        ACHECK(acp_reset(0) == -1, "ranks that are not a permutation must be refused");
        ACHECK_EQ(acp_rank(), me);
        ACHECK(acp_query_ga(key, buf) != ACP_GA_NULL, "a refused reset keeps the registrations");
    }
    int fresh = n - 1 - me;
    ACHECK(acp_reset(fresh) == 0, "acp_reset");
    at_rank = acp_rank();
    ACHECK_EQ(acp_rank(), fresh);
    ACHECK_EQ(acp_procs(), n);
    for (int i = 0; i < 4096; i++) ACHECK(at_starter()[i] == 0, "starter byte %d cleared", i);
    ACHECK(acp_query_ga(key, buf) == ACP_GA_NULL, "registrations are gone after acp_reset");
    acp_sync();
    /* the new numbering: my new rank to my new right neighbour, and one
     * atomic add each on new rank 0's counter */
    int right = (fresh + 1) % n, left = (fresh + n - 1) % n;
    uint32_t v = (uint32_t)fresh + 1000;
    memcpy(at_starter() + 64, &v, 4);
    acp_complete(acp_copy(acp_query_starter_ga(right) + 128, acp_query_starter_ga(fresh) + 64, 4, ACP_HANDLE_NULL));
    acp_complete(acp_add8(acp_query_starter_ga(fresh) + 256, acp_query_starter_ga(0) + 512, 1, ACP_HANDLE_NULL));
    acp_sync();
    uint32_t got;
    memcpy(&got, at_starter() + 128, 4);
    ACHECK_EQ(got, (uint32_t)left + 1000);
    if (fresh == 0) {
        uint64_t total;
        memcpy(&total, at_starter() + 512, 8);
        ACHECK_EQ(total, (uint64_t)n);
    }
    ACHECK(acp_finalize() == 0, "acp_finalize");
    printf("PASS acp_reset rank %d now %d of %d\n", me, fresh, n);
    return 0;
}
