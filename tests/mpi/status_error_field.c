/* Calls that complete one operation leave status.MPI_ERROR alone (MPI-4.1
 * section 3.2.5: only the multiple-completion calls set it, and only when
 * they return MPI_ERR_IN_STATUS). Every call that fills a status is tried
 * with a sentinel in MPI_ERROR: probes, matched probes and receives,
 * blocking and nonblocking, MPI_PROC_NULL included. */
#include "mpitest.h"

#define SENTINEL MPI_ERR_DIMS

static void fresh(MPI_Status *s)
{
    memset(s, 0, sizeof *s);
    s->MPI_ERROR = SENTINEL;
}

#define KEEPS(s, what) CHECK((s).MPI_ERROR == SENTINEL, "%s overwrote MPI_ERROR with %d", what, (s).MPI_ERROR)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status s;
    MPI_Message m;
    MPI_Request r;
    int flag, v = rank, got = -1;

    /* matched probe, then Mrecv; the same through Improbe and Imrecv */
    MPI_Send(&v, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
    fresh(&s);
    MPI_Mprobe(left, 1, MPI_COMM_WORLD, &m, &s);
    KEEPS(s, "MPI_Mprobe");
    CHECK_EQ(s.MPI_SOURCE, left);
    fresh(&s);
    MPI_Mrecv(&got, 1, MPI_INT, &m, &s);
    KEEPS(s, "MPI_Mrecv");
    CHECK_EQ(got, left);

    MPI_Send(&v, 1, MPI_INT, right, 2, MPI_COMM_WORLD);
    fresh(&s);
    do MPI_Improbe(left, 2, MPI_COMM_WORLD, &flag, &m, &s);
    while (!flag);
    KEEPS(s, "MPI_Improbe");
    MPI_Imrecv(&got, 1, MPI_INT, &m, &r);
    fresh(&s);
    MPI_Wait(&r, &s);
    KEEPS(s, "MPI_Wait after MPI_Imrecv");

    /* plain probes and receives */
    MPI_Send(&v, 1, MPI_INT, right, 3, MPI_COMM_WORLD);
    fresh(&s);
    MPI_Probe(left, 3, MPI_COMM_WORLD, &s);
    KEEPS(s, "MPI_Probe");
    fresh(&s);
    do MPI_Iprobe(left, 3, MPI_COMM_WORLD, &flag, &s);
    while (!flag);
    KEEPS(s, "MPI_Iprobe");
    fresh(&s);
    MPI_Recv(&got, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &s);
    KEEPS(s, "MPI_Recv");

    fresh(&s);
    MPI_Sendrecv(&v, 1, MPI_INT, right, 4, &got, 1, MPI_INT, left, 4, MPI_COMM_WORLD, &s);
    KEEPS(s, "MPI_Sendrecv");
    fresh(&s);
    MPI_Sendrecv_replace(&v, 1, MPI_INT, right, 5, left, 5, MPI_COMM_WORLD, &s);
    KEEPS(s, "MPI_Sendrecv_replace");

    MPI_Irecv(&got, 1, MPI_INT, left, 6, MPI_COMM_WORLD, &r);
    MPI_Send(&v, 1, MPI_INT, right, 6, MPI_COMM_WORLD);
    fresh(&s);
    do MPI_Test(&r, &flag, &s);
    while (!flag);
    KEEPS(s, "MPI_Test");

    int idx;
    MPI_Irecv(&got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &r);
    MPI_Send(&v, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
    fresh(&s);
    MPI_Waitany(1, &r, &idx, &s);
    KEEPS(s, "MPI_Waitany");
    MPI_Irecv(&got, 1, MPI_INT, left, 8, MPI_COMM_WORLD, &r);
    MPI_Send(&v, 1, MPI_INT, right, 8, MPI_COMM_WORLD);
    fresh(&s);
    do MPI_Testany(1, &r, &idx, &flag, &s);
    while (!flag);
    KEEPS(s, "MPI_Testany");
    MPI_Irecv(&got, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &r);
    MPI_Send(&v, 1, MPI_INT, right, 9, MPI_COMM_WORLD);
    fresh(&s);
    do MPI_Request_get_status(r, &flag, &s);
    while (!flag);
    KEEPS(s, "MPI_Request_get_status");
    MPI_Wait(&r, MPI_STATUS_IGNORE);

    /* MPI_PROC_NULL: the status says so, and MPI_ERROR still stays */
    fresh(&s);
    MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &s);
    KEEPS(s, "MPI_Probe(MPI_PROC_NULL)");
    CHECK_EQ(s.MPI_SOURCE, MPI_PROC_NULL);
    fresh(&s);
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &s);
    KEEPS(s, "MPI_Mprobe(MPI_PROC_NULL)");
    CHECK(m == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) gave no MPI_MESSAGE_NO_PROC");
    fresh(&s);
    MPI_Mrecv(&got, 1, MPI_INT, &m, &s);
    KEEPS(s, "MPI_Mrecv(MPI_MESSAGE_NO_PROC)");
    fresh(&s);
    MPI_Recv(&got, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &s);
    KEEPS(s, "MPI_Recv(MPI_PROC_NULL)");

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS status_error_field\n");
    MPI_Finalize();
    return 0;
}
