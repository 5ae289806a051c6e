/* LMTEST-EXPECT: --exit-code 7 */
/* MPI_Abort(MPI_COMM_WORLD, 7) from the last rank while every other rank is
 * blocked in MPI_Recv: the whole job ends promptly and the launcher exits
 * with the error code 7. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD), x = 0;
    if (rank == size - 1) {
        /* Give the others time to block in MPI_Recv. */
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.5)
            ;
        printf("rank %d calling MPI_Abort(MPI_COMM_WORLD, 7)\n", rank);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 7);
        printf("UNEXPECTED: MPI_Abort returned\n");
        return 3;
    }
    MPI_Recv(&x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("UNEXPECTED: rank %d received a message that was never sent\n", rank);
    MPI_Finalize();
    return 4;
}
