/* Ping-pong latency (half round trip) and streaming bandwidth between ranks
 * 0 and 1, 1 byte to 4 MiB. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE (4 << 20)
#define WINDOW 16

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "pingpong needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    char *buf = malloc(MAX_SIZE);
    memset(buf, 1, MAX_SIZE);
    MPI_Request reqs[WINDOW];
    if (rank == 0) printf("%10s %14s %14s\n", "bytes", "latency_us", "bandwidth_MB/s");
    for (int n = 1; n <= MAX_SIZE; n *= 2) {
        int iters = n <= 65536 ? 2000 : 200;
        if (rank < 2) {
            int peer = 1 - rank;
            for (int pass = 0; pass < 2; pass++) { /* first pass warms up */
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                for (int i = 0; i < iters; i++) {
                    if (rank == 0) {
                        MPI_Send(buf, n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
                        MPI_Recv(buf, n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    } else {
                        MPI_Recv(buf, n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        MPI_Send(buf, n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
                    }
                }
                double lat = (MPI_Wtime() - t0) / iters / 2 * 1e6;
                MPI_Barrier(MPI_COMM_WORLD);
                int bw_iters = iters / WINDOW > 4 ? iters / WINDOW : 4;
                t0 = MPI_Wtime();
                for (int i = 0; i < bw_iters; i++) {
                    for (int w = 0; w < WINDOW; w++) {
                        if (rank == 0) MPI_Isend(buf, n, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &reqs[w]);
                        else MPI_Irecv(buf, n, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &reqs[w]);
                    }
                    MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
                }
                char ack = 0;
                if (rank == 0) MPI_Recv(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                else MPI_Send(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
                double bw = (double)n * WINDOW * bw_iters / (MPI_Wtime() - t0) / 1e6;
                if (pass == 1 && rank == 0) printf("%10d %14.3f %14.1f\n", n, lat, bw);
            }
        } else {
            for (int pass = 0; pass < 2; pass++) {
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
