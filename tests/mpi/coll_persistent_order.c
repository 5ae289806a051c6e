/* Persistent collectives match in the order they were initialized (MPI-4.1
 * section 6.13): once created, each rank may start them in its own order,
 * one by one or through MPI_Startall with the requests in any order, with
 * other collectives on the same communicator in between. Run with and
 * without the node mailboxes (a blocking collective first sets them up). */
#include "mpitest.h"

#define N 1000 /* ints per broadcast: past one mailbox entry */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int phase = 0; phase < 2; phase++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        if (phase == 1) MPI_Barrier(comm); /* mailboxes, where the node allows them */
        static int big[N], small;
        int sum_in, sum_out = -1;
        MPI_Request req[4];
        MPI_Bcast_init(big, N, MPI_INT, 0, comm, MPI_INFO_NULL, &req[0]);
        MPI_Barrier_init(comm, MPI_INFO_NULL, &req[1]);
        MPI_Allreduce_init(&sum_in, &sum_out, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req[2]);
        MPI_Bcast_init(&small, 1, MPI_INT, size - 1, comm, MPI_INFO_NULL, &req[3]);
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < N; i++) big[i] = rank == 0 ? round * N + i : -1;
            small = rank == size - 1 ? 7 * round : -1;
            sum_in = rank + round;
            /* a rank-dependent order */
            int order[4] = {0, 1, 2, 3};
            for (int i = 0; i < 4; i++) {
                int j = (i + rank + round) % 4, t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            if ((rank + round) % 2) {
                for (int i = 0; i < 4; i++) MPI_Start(&req[order[i]]);
            } else {
                MPI_Request shuffled[4];
                for (int i = 0; i < 4; i++) shuffled[i] = req[order[i]];
                MPI_Startall(4, shuffled);
            }
            /* a nonblocking collective in between, in the same order everywhere */
            int one = 1, all = 0;
            MPI_Request ir;
            MPI_Iallreduce(&one, &all, 1, MPI_INT, MPI_SUM, comm, &ir);
            int rc = MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
            CHECK_EQ(rc, MPI_SUCCESS);
            MPI_Wait(&ir, MPI_STATUS_IGNORE);
            CHECK_EQ(all, size);
            for (int i = 0; i < N; i++)
                if (big[i] != round * N + i) CHECK(0, "round %d: big[%d] = %d", round, i, big[i]);
            CHECK_EQ(small, 7 * round);
            CHECK_EQ(sum_out, size * (size - 1) / 2 + size * round);
        }
        for (int i = 0; i < 4; i++) MPI_Request_free(&req[i]);
        MPI_Comm_free(&comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS coll_persistent_order\n");
    MPI_Finalize();
    return 0;
}
