/* LMTEST-EXPECT: --nonzero --regex MPI_Send */
/* Under the default MPI_ERRORS_ARE_FATAL an invalid call ends the whole job
 * with a non-zero exit status and a message naming the function.  Rank 0 sends
 * to a rank that does not exist; the others wait for a message that never
 * comes and must be ended by the runtime. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD), x = 1;
    if (rank == 0) {
        printf("sending to rank %d of %d ranks\n", size + 5, size);
        fflush(stdout);
        int rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
        printf("UNEXPECTED: the send returned %d under MPI_ERRORS_ARE_FATAL\n", rc);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 0);
    } else {
        MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
