/* LMTEST-EXPECT: --nonzero --regex MPI_Win_attach */
/* Under a window's default MPI_ERRORS_ARE_FATAL, a bad call on the window
 * ends the whole job with a message naming the function, even though the
 * communicator's handler returns errors: the window's handler decides.
 * Every rank makes the same bad call, so no rank is left waiting.
 * (MPI-4.1 section 12.6: MPI_ERRORS_ARE_FATAL is associated with a window
 * at its creation; MPICH 4.1 returns this error instead.) */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char buf[16];
    MPI_Win win;
    CHECK_MPI(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int rc = MPI_Win_attach(win, buf, 8); /* not a dynamic window */
    printf("UNEXPECTED: MPI_Win_attach returned %d under MPI_ERRORS_ARE_FATAL\n", rc);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 0);
    return 0;
}
