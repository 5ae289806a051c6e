/* Only MPI_Init and MPI_Finalize: the harness times the whole launch
 * (`mpirun -n 2 ./init`) from outside, so start-up and tear-down of the
 * launcher are part of the number. */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
