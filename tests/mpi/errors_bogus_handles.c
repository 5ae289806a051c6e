/* LMTEST-LEANMPI-ONLY */
/* Handles that are neither valid nor null.  The standard makes using them
 * erroneous without saying what happens (other MPIs may crash); LeanMPI
 * validates every handle and reports MPI_ERR_COMM / MPI_ERR_TYPE /
 * MPI_ERR_REQUEST under MPI_ERRORS_RETURN. */
#include "mpitest.h"
#include <stdint.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), buf[4] = {0}, r, cls;
    mt_errors_return();

    MPI_Comm bogus_comm = (MPI_Comm)(intptr_t)0x12345;
    CHECK_ERRCLASS(MPI_Send(buf, 1, MPI_INT, rank, 0, bogus_comm), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Comm_rank(bogus_comm, &r), MPI_ERR_COMM);

    MPI_Comm c, stale;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    stale = c;
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK_ERRCLASS(MPI_Comm_size(stale, &r), MPI_ERR_COMM);

    MPI_Datatype t, stale_t;
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    stale_t = t;
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_ERRCLASS(MPI_Send(buf, 1, stale_t, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Send(buf, 1, (MPI_Datatype)(intptr_t)0x54321, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);

    MPI_Request bogus_req = (MPI_Request)(intptr_t)0x7777;
    int rc = MPI_Wait(&bogus_req, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST || cls == MPI_ERR_ARG, "Wait on a bogus request: class %d", cls);

    /* Negative color other than MPI_UNDEFINED. */
    MPI_Comm s;
    CHECK_ERRCLASS(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &s), MPI_ERR_ARG);

    int x = 1, y = 0;
    CHECK_MPI(MPI_Sendrecv(&x, 1, MPI_INT, rank, 1, &y, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ(y, 1);
    mt_pass("errors_bogus_handles: bogus and stale handles give MPI_ERR_COMM/TYPE/REQUEST");
    MPI_Finalize();
    return 0;
}
