/* MPI_UNIVERSE_SIZE is what the launcher has room for: the value of
 * UNIVERSE_EXPECT when the test sets it (mpirun --universe-size), else at
 * least the size of MPI_COMM_WORLD. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, *u, flag = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &u, &flag));
    CHECK(flag, "MPI_UNIVERSE_SIZE is not set");
    const char *expect = getenv("UNIVERSE_EXPECT");
    if (expect) CHECK(*u == atoi(expect), "MPI_UNIVERSE_SIZE %d, mpirun was given %s", *u, expect);
    else CHECK(*u >= size, "MPI_UNIVERSE_SIZE %d below the %d processes", *u, size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS universe_size %d\n", *u);
    MPI_Finalize();
    return 0;
}
