/* MPI_ERRORS_ABORT on a communicator: an invalid call on it ends the job
 * with a non-zero status and a message naming the function, while the other
 * ranks are blocked in a receive that can never complete. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD), x = 1;
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_ABORT));
    MPI_Errhandler eh;
    CHECK_MPI(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_ABORT, "Comm_get_errhandler does not give back MPI_ERRORS_ABORT");
    if (rank == 0) {
        /* A negative count on the ERRORS_ABORT communicator. */
        MPI_Send(&x, -3, MPI_INT, size - 1, 0, c);
        printf("FAIL errors_abort: MPI_Send with count -3 returned under MPI_ERRORS_ABORT\n");
        fflush(stdout);
    } else {
        MPI_Recv(&x, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("FAIL errors_abort: a receive that nobody sends to completed\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
