/* Under the default MPI_ERRORS_ARE_FATAL a bad collective argument ends
 * the whole job with a non-zero exit status and a message naming the
 * function and the argument.  Every rank makes the same bad call (a
 * negative entry in recvcounts), so no rank is left waiting. */
#include "mpitest.h"
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size = mt_size(MPI_COMM_WORLD);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    int *sbuf = calloc((size_t)size, sizeof(int)), *rbuf = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    int *rcounts = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) rcounts[i] = i == size - 1 ? -4 : 1;
    int rc = MPI_Alltoallv(sbuf, counts, displs, MPI_INT, rbuf, rcounts, displs, MPI_INT, MPI_COMM_WORLD);
    printf("UNEXPECTED: MPI_Alltoallv returned %d under MPI_ERRORS_ARE_FATAL\n", rc);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 0);
    return 0;
}
