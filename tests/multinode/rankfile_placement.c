/* A job placed by a rankfile (on_hosts.py --placement H0,H1,...; the same
 * list is this program's argument): every rank checks that the ranks it
 * shares a node with (MPI_COMM_TYPE_SHARED) are exactly those the rankfile
 * put on its host, and that its node's local ranks are in world-rank
 * order; then traffic that crosses the placement (a ring of sends both
 * ways with eager and rendezvous sizes, allreduce, alltoall, bcast from
 * every root) is checked against what each rank must receive. */
#include "mpitest.h"
#include <stdlib.h>
#include <string.h>

#define BIG (256 * 1024) /* past the eager limit of either transport */

static int parse_placement(const char *s, int *host, int n)
{
    int k = 0;
    for (const char *p = s; *p && k < n; k++) {
        char *end;
        host[k] = (int)strtol(p, &end, 10);
        if (end == p) return -1;
        p = *end == ',' ? end + 1 : end;
    }
    return k;
}

static void check_node(const int *host, int rank, int size)
{
    MPI_Comm node;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int n = mt_size(node), expect = 0;
    for (int r = 0; r < size; r++) expect += host[r] == host[rank];
    CHECK(n == expect, "rank %d: %d ranks share my node, the rankfile puts %d on host %d", rank, n, expect, host[rank]);
    int *members = malloc(sizeof *members * (size_t)n);
    CHECK_MPI(MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, node));
    for (int i = 0; i < n; i++) {
        CHECK(host[members[i]] == host[rank], "rank %d shares a node with rank %d of host %d, not mine (%d)", rank,
              members[i], host[members[i]], host[rank]);
        CHECK(i == 0 || members[i] > members[i - 1], "local ranks not in world order: %d after %d", members[i],
              members[i - 1]);
    }
    free(members);
    CHECK_MPI(MPI_Comm_free(&node));
}

static void check_ring(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    char *out = malloc(BIG), *in = malloc(BIG);
    for (int bytes = 8; bytes <= BIG; bytes *= 64) {
        memset(out, rank & 0x7f, (size_t)bytes);
        memset(in, 0xff, (size_t)bytes);
        CHECK_MPI(MPI_Sendrecv(out, bytes, MPI_CHAR, right, 1, in, bytes, MPI_CHAR, left, 1, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
        for (int i = 0; i < bytes; i++)
            CHECK(in[i] == (char)(left & 0x7f), "ring: byte %d of %d from %d", i, bytes, left);
    }
    free(out);
    free(in);
}

static void check_collectives(int rank, int size)
{
    long sum = 0, expect = (long)size * (size - 1) / 2;
    long mine = rank;
    CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == expect, "allreduce: %ld, expected %ld", sum, expect);
    int *send = malloc(sizeof *send * (size_t)size), *recv = malloc(sizeof *recv * (size_t)size);
    for (int r = 0; r < size; r++) send[r] = rank * 1000 + r;
    CHECK_MPI(MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++) CHECK(recv[r] == r * 1000 + rank, "alltoall: %d from %d", recv[r], r);
    for (int root = 0; root < size; root++) {
        int v = rank == root ? root + 77 : -1;
        CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, root, MPI_COMM_WORLD));
        CHECK(v == root + 77, "bcast from %d: %d", root, v);
    }
    free(send);
    free(recv);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);
    int *host = malloc(sizeof *host * (size_t)size);
    CHECK(argc > 1 && parse_placement(argv[1], host, size) == size, "give the placement of all %d ranks", size);
    check_node(host, rank, size);
    check_ring(rank, size);
    check_collectives(rank, size);
    free(host);
    MPI_Barrier(MPI_COMM_WORLD);
    mt_pass("rankfile placement");
    MPI_Finalize();
    return 0;
}
