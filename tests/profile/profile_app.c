/* A program whose communication is known exactly, for leanmpi-profile:
 * check_profile.py computes the same from the rank count and compares it
 * with what the profile recorded. Standard MPI only (built with every MPI).
 *
 * Point-to-point, rank r to r+1: 3 MPI_Send and 2 MPI_Isend of 100 ints,
 * 4 starts of a persistent send of 10 doubles; to r-1: one MPI_Sendrecv of
 * 50 ints; to MPI_PROC_NULL: one send (not recorded).
 * Collectives on MPI_COMM_WORLD: 2 MPI_Bcast of 1000 bytes from root 1
 * (root 0 on one rank), 3 MPI_Allreduce of 8 doubles, 1 MPI_Alltoall of
 * 16 ints, 1 MPI_Barrier, 1 MPI_Gather of 4 ints to root 0, 1
 * MPI_Alltoallv sending i+1 ints to rank i, 1 MPI_Allgatherv of r+1 ints
 * from rank r; on the even/odd halves (MPI_Comm_split): 2 MPI_Allreduce of
 * 4 ints.
 * Neighbourhood collectives (recorded as sends to each destination): on a
 * periodic ring (MPI_Cart_create), 1 MPI_Neighbor_alltoall of 6 ints to
 * each side; on a distributed graph with one edge r -> r+1, 1
 * MPI_Neighbor_allgather of 5 doubles.
 * One-sided, on a window of all ranks: 1 MPI_Put of 3 ints and 1
 * MPI_Accumulate of 4 ints to r+1, 1 MPI_Get of 2 ints from r-1, 1
 * MPI_Fetch_and_op of an int on rank 0 (counted twice: it goes and comes
 * back).
 * With an MPI-4 library (rank 0 prints "MPI_VERSION 4"): 1 MPI_Send_c of
 * 11 ints to r+1, and a persistent MPI_Allreduce_init of 2 doubles started
 * 3 times. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    int out[100] = {0}, in[100];
    double d[10] = {0}, dd[10];
    MPI_Request reqs[4];

    for (int i = 0; i < 3; i++) {
        MPI_Request r;
        MPI_Irecv(in, 100, MPI_INT, left, 1, MPI_COMM_WORLD, &r);
        MPI_Send(out, 100, MPI_INT, right, 1, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < 2; i++) {
        MPI_Irecv(in, 100, MPI_INT, left, 2, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(out, 100, MPI_INT, right, 2, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    }
    MPI_Request ps, pr;
    MPI_Send_init(d, 10, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &ps);
    MPI_Recv_init(dd, 10, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &pr);
    for (int i = 0; i < 4; i++) {
        MPI_Start(&pr);
        MPI_Start(&ps);
        MPI_Wait(&pr, MPI_STATUS_IGNORE);
        MPI_Wait(&ps, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);
    MPI_Sendrecv(out, 50, MPI_INT, left, 4, in, 50, MPI_INT, right, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(out, 7, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD);

    char bytes[1000] = {0};
    for (int i = 0; i < 2; i++) MPI_Bcast(bytes, 1000, MPI_CHAR, n > 1 ? 1 : 0, MPI_COMM_WORLD);
    double v[8] = {0}, w[8];
    for (int i = 0; i < 3; i++) MPI_Allreduce(v, w, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int *a = calloc((size_t)n * 16, sizeof(int)), *b = calloc((size_t)n * 16, sizeof(int));
    MPI_Alltoall(a, 16, MPI_INT, b, 16, MPI_INT, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    int g[4] = {0}, *gall = calloc((size_t)n * 4, sizeof(int));
    MPI_Gather(g, 4, MPI_INT, gall, 4, MPI_INT, 0, MPI_COMM_WORLD);

    int *sc = malloc((size_t)n * sizeof(int)), *sd = malloc((size_t)n * sizeof(int));
    int *rc = malloc((size_t)n * sizeof(int)), *rd = malloc((size_t)n * sizeof(int));
    int stot = 0, rtot = 0;
    for (int i = 0; i < n; i++) {
        sc[i] = i + 1;
        sd[i] = stot;
        stot += sc[i];
        rc[i] = rank + 1;
        rd[i] = rtot;
        rtot += rc[i];
    }
    int *sv = calloc((size_t)stot, sizeof(int)), *rv = calloc((size_t)rtot, sizeof(int));
    MPI_Alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, MPI_COMM_WORLD);
    int gtot = 0;
    for (int i = 0; i < n; i++) {
        rc[i] = i + 1;
        rd[i] = gtot;
        gtot += rc[i];
    }
    int *gv = calloc((size_t)gtot, sizeof(int));
    MPI_Allgatherv(sv, rank + 1, MPI_INT, gv, rc, rd, MPI_INT, MPI_COMM_WORLD);

    int dims[1] = {n}, periods[1] = {1}, six[12] = {0}, six_in[12];
    MPI_Comm ring, edge;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Neighbor_alltoall(six, 6, MPI_INT, six_in, 6, MPI_INT, ring);
    MPI_Comm_free(&ring);
    int one = 1;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &right, &one, MPI_INFO_NULL, 0, &edge);
    double five[5] = {0}, five_in[5];
    MPI_Neighbor_allgather(five, 5, MPI_DOUBLE, five_in, 5, MPI_DOUBLE, edge);
    MPI_Comm_free(&edge);

    int area[16] = {0}, three[3] = {0}, two[2], four[4] = {0}, inc = 1, old;
    MPI_Win win;
    MPI_Win_create(area, sizeof area, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    MPI_Put(three, 3, MPI_INT, right, 0, 3, MPI_INT, win);
    MPI_Accumulate(four, 4, MPI_INT, right, 4, 4, MPI_INT, MPI_SUM, win);
    MPI_Get(two, 2, MPI_INT, left, 8, 2, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Fetch_and_op(&inc, &old, MPI_INT, 0, 12, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);

#if MPI_VERSION >= 4
    if (rank == 0) printf("MPI_VERSION 4\n");
    int eleven[11] = {0}, eleven_in[11];
    MPI_Request rq;
    MPI_Irecv_c(eleven_in, 11, MPI_INT, left, 6, MPI_COMM_WORLD, &rq);
    MPI_Send_c(eleven, 11, MPI_INT, right, 6, MPI_COMM_WORLD);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    double x[2] = {0}, y[2];
    MPI_Request pc;
    MPI_Allreduce_init(x, y, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &pc);
    for (int i = 0; i < 3; i++) {
        MPI_Start(&pc);
        MPI_Wait(&pc, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&pc);
#endif

    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int h[4] = {0}, hh[4];
    for (int i = 0; i < 2; i++) MPI_Allreduce(h, hh, 4, MPI_INT, MPI_SUM, half);
    MPI_Comm_free(&half);

    free(a);
    free(b);
    free(gall);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sv);
    free(rv);
    free(gv);
    MPI_Finalize();
    return 0;
}
