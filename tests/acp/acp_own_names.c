/* A program may name its own helpers and globals as it likes: what looks
 * like the library's internals (lm_*, the ACP library's iacp_*) is its own,
 * and the library does not call into it. */
#include "acptest.h"

int lm_acp = 7;       /* the library's state has this name inside it */
int lm_progress(void) /* the library's progress loop too */
{
    fprintf(stderr, "FAIL the library called the program's lm_progress\n");
    exit(1);
}
const char *lm_boot_name(void) { return "the program's own"; }
int iacp_query_starter_ga_dl(int rank) { return rank + 1; }

int main(int argc, char **argv)
{
    ACHECK(acp_init(&argc, &argv) == 0, "acp_init");
    int me = acp_rank(), n = acp_procs();
    at_rank = me;
    acp_complete(acp_add8(acp_query_starter_ga(me) + 8, acp_query_starter_ga(0), 1, ACP_HANDLE_NULL));
    ACHECK(acp_sync() == 0, "acp_sync");
    if (me == 0) ACHECK_EQ(*(long *)at_starter(), n);
    ACHECK(lm_acp == 7 && iacp_query_starter_ga_dl(1) == 2 && !strcmp(lm_boot_name(), "the program's own"),
           "the program's names are its own");
    ACHECK(acp_finalize() == 0, "acp_finalize");
    printf("PASS acp_own_names rank %d of %d\n", me, n);
    return 0;
}
