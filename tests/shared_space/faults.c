/* A rank that fails in one address space (argv[1]): "segv" dereferences
 * NULL, "abort" calls abort(), "exit3" exits with 3 after MPI_Finalize,
 * "nofinalize" exits 0 without MPI_Finalize. Rank 1 fails; the others wait
 * in a barrier, which the launcher must end. */
#include "mpitest.h"
#include <signal.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *how = argc > 1 ? argv[1] : "segv";
    if (rank == 1) {
        if (!strcmp(how, "segv")) *(volatile int *)(uintptr_t)argc = 0; /* argc is small: an unmapped address */
        if (!strcmp(how, "abort")) abort();
        if (!strcmp(how, "nofinalize")) exit(0);
    }
    if (!strcmp(how, "exit3")) {
        MPI_Finalize();
        return rank == 1 ? 3 : 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
