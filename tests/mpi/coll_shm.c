/* Collectives on communicators whose ranks share a node, where small data
 * goes through node shared-memory mailboxes set up by the first blocking
 * collective. Checks every call's data while:
 *  - communicators come and go quickly and one rank lags behind, so a
 *    mailbox is released while a peer still has to read it and its memory
 *    is soon asked for again;
 *  - more communicators are alive at once than get mailboxes (the rest use
 *    point-to-point algorithms), used in turn;
 *  - nonblocking and persistent collectives started before the mailboxes
 *    exist mix with ones started after.
 * The same program runs with LEANMPI_COLL_SHM=0 (no mailboxes at all). */
#include "mpitest.h"
#include <stdint.h>
#include <unistd.h>

#define CHURN 300
#define LIVE 60

static void bcast_allreduce_check(MPI_Comm c, int64_t seed)
{
    int me = mt_rank(c), n = mt_size(c), root = (int)(seed % n);
    int64_t v = me == root ? seed * 31 : -1;
    CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT64_T, root, c));
    CHECK(v == seed * 31, "bcast %lld: got %lld", (long long)seed, (long long)v);
    int64_t in[3] = {seed + me, me, 1}, out[3];
    CHECK_MPI(MPI_Allreduce(in, out, 3, MPI_INT64_T, MPI_SUM, c));
    CHECK(out[0] == seed * n + (int64_t)n * (n - 1) / 2 && out[2] == n, "allreduce %lld: %lld %lld", (long long)seed,
          (long long)out[0], (long long)out[2]);
}

static void churn(void)
{
    int me = mt_rank(MPI_COMM_WORLD), n = mt_size(MPI_COMM_WORLD);
    for (int i = 0; i < CHURN; i++) {
        MPI_Comm c;
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        /* the last rank falls behind now and then: the others free their
         * mailboxes before it has read what they posted last */
        if (me == n - 1 && i % 17 == 0) usleep(2000);
        bcast_allreduce_check(c, i);
        CHECK_MPI(MPI_Comm_free(&c));
    }
    mt_pass("communicators freed while a lagging rank still reads");
}

static void many_alive(void)
{
    MPI_Comm c[LIVE];
    int me = mt_rank(MPI_COMM_WORLD), n = mt_size(MPI_COMM_WORLD);
    for (int k = 0; k < LIVE; k++) {
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c[k]));
        bcast_allreduce_check(c[k], k);
    }
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < LIVE; k++) {
            int send[16], recv[16];
            for (int j = 0; j < n; j++) send[j] = 1000 * me + j + k;
            CHECK_MPI(MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, c[(k * 7 + round) % LIVE]));
            for (int j = 0; j < n; j++)
                CHECK(recv[j] == 1000 * j + me + k, "alltoall on comm %d: from %d got %d", k, j, recv[j]);
        }
    for (int k = 0; k < LIVE; k++) CHECK_MPI(MPI_Comm_free(&c[k]));
    mt_pass("more communicators alive than get mailboxes");
}

static void before_and_after(void)
{
    int me = mt_rank(MPI_COMM_WORLD), n = mt_size(MPI_COMM_WORLD);
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    /* persistent and nonblocking before the first blocking collective */
    int pval = -1, ival[4] = {-1, -1, -1, -1};
    MPI_Request pers, early;
    CHECK_MPI(MPI_Bcast_init(&pval, 1, MPI_INT, 0, c, MPI_INFO_NULL, &pers));
    int contrib = me + 1, early_sum = 0;
    CHECK_MPI(MPI_Iallreduce(&contrib, &early_sum, 1, MPI_INT, MPI_SUM, c, &early));
    /* the first blocking collective sets the mailboxes up */
    int bsum = 0;
    CHECK_MPI(MPI_Allreduce(&contrib, &bsum, 1, MPI_INT, MPI_SUM, c));
    CHECK(bsum == n * (n + 1) / 2, "blocking allreduce: %d", bsum);
    MPI_Request late[4];
    for (int k = 0; k < 4; k++) {
        if (me == k % n) ival[k] = 100 + k;
        CHECK_MPI(MPI_Ibcast(&ival[k], 1, MPI_INT, k % n, c, &late[k]));
    }
    for (int s = 0; s < 5; s++) {
        if (me == 0) pval = 7 * s + 1;
        CHECK_MPI(MPI_Start(&pers));
        int x = me == n - 1 ? s : -1;
        CHECK_MPI(MPI_Bcast(&x, 1, MPI_INT, n - 1, c));
        CHECK(x == s, "blocking bcast %d among pending ones: %d", s, x);
        CHECK_MPI(MPI_Wait(&pers, MPI_STATUS_IGNORE));
        CHECK(pval == 7 * s + 1, "persistent bcast start %d: %d", s, pval);
    }
    CHECK_MPI(MPI_Waitall(4, late, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 4; k++) CHECK(ival[k] == 100 + k, "ibcast %d: %d", k, ival[k]);
    CHECK_MPI(MPI_Wait(&early, MPI_STATUS_IGNORE));
    CHECK(early_sum == n * (n + 1) / 2, "early iallreduce: %d", early_sum);
    CHECK_MPI(MPI_Request_free(&pers));
    CHECK_MPI(MPI_Comm_free(&c));
    mt_pass("nonblocking and persistent collectives started before and after the mailboxes");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(mt_size(MPI_COMM_WORLD) <= 16, "at most 16 ranks (alltoall buffers)");
    churn();
    many_alive();
    before_and_after();
    MPI_Finalize();
    return 0;
}
