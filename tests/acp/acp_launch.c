/* What a launcher gives an ACP program: acp_init takes the --acp-*
 * arguments away, the starter memory has the size given at launch
 * (argv[1]), and a process that fails ("exit R CODE": rank R exits with
 * CODE) makes the launcher fail naming it. */
#include "acptest.h"

int main(int argc, char **argv)
{
    ACHECK(acp_init(&argc, &argv) == 0, "acp_init");
    int me = acp_rank(), n = acp_procs();
    at_rank = me;
    for (int i = 1; i < argc; i++) ACHECK(strncmp(argv[i], "--acp-", 6) != 0, "argument %s left", argv[i]);
    long size = argc > 1 ? atol(argv[1]) : 65536;
    acp_ga_t mine = acp_query_starter_ga(me);
    ACHECK(acp_copy(mine + (size_t)size - 1, mine, 1, 0) != (acp_handle_t)ACP_HANDLE_NULL, "byte %ld - 1", size);
    ACHECK(acp_copy(mine + (size_t)size, mine, 1, 0) == (acp_handle_t)ACP_HANDLE_NULL, "byte %ld", size);
    acp_sync();
    if (argc > 4 && !strcmp(argv[2], "exit") && atoi(argv[3]) == me) {
        fprintf(stderr, "rank %d exits with %s on purpose\n", me, argv[4]);
        exit(atoi(argv[4]));
    }
    ACHECK(acp_finalize() == 0, "acp_finalize");
    printf("PASS acp_launch rank %d of %d, %ld bytes of starter memory\n", me, n, size);
    return 0;
}
