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
 * 4 ints. */
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
