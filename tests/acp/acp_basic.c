/* The ACP basic layer's calls at any process count: start-up arguments,
 * queries, copies local to remote, remote to local and between two other
 * processes (starter and registered memory, up to 1 MiB through the
 * relay), order handles, completion, and the calls' failures before
 * acp_init and after acp_finalize. */
#include "acptest.h"

static unsigned char pattern(int rank, size_t i) { return (unsigned char)(rank * 7 + i * 13 + (i >> 8)); }

static acp_ga_t ga_published_by(int rank, size_t at)
{
    /* a global address a process left in its starter memory at offset at */
    acp_ga_t *slot = (acp_ga_t *)(at_starter() + 4000);
    acp_handle_t h = acp_copy(acp_query_starter_ga(acp_rank()) + 4000, acp_query_starter_ga(rank) + at, sizeof *slot,
                              ACP_HANDLE_NULL);
    ACHECK(h != (acp_handle_t)ACP_HANDLE_NULL, "reading rank %d's published address", rank);
    acp_complete(h);
    return *slot;
}

int main(int argc, char **argv)
{
    (void)argc;
    ACHECK(acp_rank() == -1 && acp_sync() == -1, "calls before acp_init must fail");
    char *fake[] = {argv[0], "--acp-startermemsize=8192", "keep", "--acp-myrank", "3", "--acp-envent=udp", NULL};
    int fc = 6;
    char **fv = fake;
    ACHECK(acp_init(&fc, &fv) == 0, "acp_init");
    at_rank = acp_rank();
    ACHECK_EQ(fc, 2);
    ACHECK(!strcmp(fv[1], "keep") && fv[2] == NULL, "the --acp-* arguments are removed, the others kept");
    ACHECK(acp_init(NULL, NULL) == -1, "a second acp_init must fail");
    int me = acp_rank(), n = acp_procs();
    int left = (me + n - 1) % n, right = (me + 1) % n;
    unsigned char *sm = at_starter();
    acp_ga_t mine = acp_query_starter_ga(me);
    for (int i = 0; i < 8192; i++) ACHECK(sm[i] == 0, "starter memory is zero-filled (byte %d)", i);
    acp_sync(); /* nobody writes into another's starter memory before it was checked */
    ACHECK_EQ(acp_query_rank(mine), me);
    ACHECK_EQ(acp_query_color(mine), 0);
    ACHECK(acp_colors() >= 1, "acp_colors");
    ACHECK(acp_query_rank(ACP_GA_NULL) == -1 && acp_query_color(ACP_GA_NULL) == -1, "ACP_GA_NULL queries give -1");
    ACHECK(acp_query_starter_ga(n) == ACP_GA_NULL, "no starter memory beyond the last rank");
    /* the size given at launch bounds the starter memory */
    ACHECK(acp_copy(mine + 8190, mine, 8, ACP_HANDLE_NULL) == (acp_handle_t)ACP_HANDLE_NULL, "past the end");
    ACHECK(acp_copy(mine + 8184, mine, 8, ACP_HANDLE_NULL) != (acp_handle_t)ACP_HANDLE_NULL, "up to the end");
    memset(sm + 8184, 0, 8);

    /* local to remote: my pattern into my right neighbour's starter memory */
    for (int i = 0; i < 256; i++) sm[i] = pattern(me, (size_t)i);
    acp_handle_t h = acp_copy(acp_query_starter_ga(right) + 256, mine, 256, ACP_HANDLE_NULL);
    ACHECK(h > 0, "copy to the right neighbour");
    ACHECK(acp_sync() == 0, "acp_sync");
    for (int i = 0; i < 256; i++) ACHECK(sm[256 + i] == pattern(left, (size_t)i), "byte %d from the left", i);
    /* remote to local */
    h = acp_copy(mine + 512, acp_query_starter_ga(left), 256, ACP_HANDLE_NULL);
    acp_complete(h);
    ACHECK_EQ(acp_inquire(h), 0);
    for (int i = 0; i < 256; i++) ACHECK(sm[512 + i] == pattern(left, (size_t)i), "byte %d fetched", i);
    /* between two other processes: (me + 1)'s pattern into (me + 2)'s memory */
    h = acp_copy(acp_query_starter_ga((me + 2) % n) + 768, acp_query_starter_ga(right), 256, ACP_HANDLE_NULL);
    ACHECK(h > 0, "remote to remote copy");
    acp_sync();
    for (int i = 0; i < 256; i++) ACHECK(sm[768 + i] == pattern(left, (size_t)i), "byte %d relayed", i);

    /* registered memory (private to its owner), 1 MiB and a bit */
    size_t size = (1u << 20) + 100;
    unsigned char *buf = malloc(size), *rbuf = calloc(1, size);
    for (size_t i = 0; i < size; i++) buf[i] = pattern(me, i);
    acp_atkey_t key = acp_register_memory(buf, size, 1), rkey = acp_register_memory(rbuf, size, 0);
    ACHECK(key != ACP_ATKEY_NULL && rkey != ACP_ATKEY_NULL, "registrations");
    acp_ga_t bga = acp_query_ga(key, buf), rga = acp_query_ga(rkey, rbuf);
    ACHECK_EQ(acp_query_color(bga), 1);
    ACHECK_EQ(acp_query_rank(bga), me);
    ACHECK(acp_query_address(bga + 5) == buf + 5, "query_address of a registered address");
    ACHECK(acp_query_ga(key, buf + size) == ACP_GA_NULL, "an address past the registration has no global address");
    memcpy(sm + 1024, &bga, 8);
    memcpy(sm + 1032, &rga, 8);
    acp_sync();
    acp_ga_t lbuf = ga_published_by(left, 1024);
    h = acp_copy(rga, lbuf, size, ACP_HANDLE_NULL); /* remote to local, registered */
    acp_complete(ACP_HANDLE_ALL);
    for (size_t i = 0; i < size; i++) ACHECK(rbuf[i] == pattern(left, i), "registered byte %zu", i);
    acp_sync();
    /* remote to remote on registered memory: (me + 1)'s buffer into (me + 2)'s */
    acp_ga_t from = ga_published_by(right, 1024), to = ga_published_by((me + 2) % n, 1032);
    ACHECK(acp_copy(to, from, size, ACP_HANDLE_NULL) > 0, "registered remote to remote");
    acp_sync();
    for (size_t i = 0; i < size; i++) ACHECK(rbuf[i] == pattern(left, i), "relayed registered byte %zu", i);
    acp_sync();

    /* an order chain: the left's first 64 bytes into my buffer, then from
     * there into my right neighbour's starter memory */
    acp_handle_t h1 = acp_copy(rga, lbuf, 64, ACP_HANDLE_NULL);
    acp_handle_t h2 = acp_copy(acp_query_starter_ga(right) + 2048, rga, 64, h1);
    ACHECK(h1 > 0 && h2 > h1, "handles grow in issue order (%lld, %lld)", (long long)h1, (long long)h2);
    acp_complete(h2);
    ACHECK_EQ(acp_inquire(h1), 0);
    ACHECK_EQ(acp_inquire(h2 + 1000), 0);
    acp_complete(h2 + 1000); /* never issued: returns at once */
    ACHECK(acp_copy(mine, mine + 8, 8, h2 + 1000) == (acp_handle_t)ACP_HANDLE_NULL,
           "an order handle never issued is refused");
    h = acp_copy(mine + 3000, mine + 3008, 8, ACP_HANDLE_CONT);
    ACHECK(h > 0, "ACP_HANDLE_CONT as order");
    acp_sync();
    int ll = (me + 2 * n - 2) % n;
    for (int i = 0; i < 64; i++) ACHECK(sm[2048 + i] == pattern(ll, (size_t)i), "chained byte %d", i);

    acp_sync();
    ACHECK(acp_unregister_memory(key) == 0 && acp_unregister_memory(rkey) == 0, "unregister");
    ACHECK(acp_unregister_memory(key) == -1, "a key unregistered twice");
    ACHECK(acp_query_ga(key, buf) == ACP_GA_NULL, "the key of a registration that is gone");
    ACHECK(acp_query_address(bga) == NULL, "an address of a registration that is gone");
    ACHECK(acp_finalize() == 0, "acp_finalize");
    ACHECK(acp_rank() == -1 && acp_procs() == -1 && acp_sync() == -1, "calls after acp_finalize must fail");
    at_rank = -1;
    free(buf);
    free(rbuf);
    printf("PASS acp_basic rank %d of %d\n", me, n);
    return 0;
}
