/* Compiled, not run (mpi.header_warnings): valid calls with mpi.h's
 * sentinel arguments must draw no warning from a compiler at -Wall
 * -Wextra -O2. GCC warned of an out-of-bounds read at every call given
 * MPI_UNWEIGHTED while it was the constant (int *)2. */
#include <mpi.h>

int header_warnings(MPI_Comm comm, int *buf)
{
    MPI_Comm g1, g2;
    int src = 0, dst = 0, rc = 0;
    rc |= MPI_Dist_graph_create_adjacent(comm, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g1);
    rc |= MPI_Dist_graph_create(comm, 1, &src, &src, &dst, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g2);
    rc |= MPI_Allreduce(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, comm);
    rc |= MPI_Recv(buf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE);
    rc |= MPI_Send(MPI_BOTTOM, 0, MPI_INT, 0, 0, comm);
    return rc;
}
