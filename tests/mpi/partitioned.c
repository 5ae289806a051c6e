/* Partitioned communication (MPI_Psend_init / MPI_Precv_init, MPI_Pready*,
 * MPI_Parrived): around a ring and to oneself, restarted several times,
 * partitions marked ready in any order and through all three calls, a
 * derived datatype, pairs matched in the order they were initialized (not
 * the order their data became ready), no match with ordinary receives, and
 * argument errors. */
#include "mpitest.h"

#define NPART 4
#define PCOUNT 3

static void fill(int *buf, int n, int seed)
{
    for (int i = 0; i < n; i++) buf[i] = seed * 1000 + i;
}

static void check_buf(const int *buf, int n, int seed)
{
    for (int i = 0; i < n; i++) CHECK_EQ(buf[i], seed * 1000 + i);
}

/* One exchange with each of the ready forms in turn. */
static void ring(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int dest = (rank + 1) % size, source = (rank + size - 1) % size;
    int sbuf[NPART * PCOUNT], rbuf[NPART * PCOUNT];
    MPI_Request sreq, rreq;
    CHECK_MPI(MPI_Psend_init(sbuf, NPART, PCOUNT, MPI_INT, dest, 5, comm, MPI_INFO_NULL, &sreq));
    CHECK_MPI(MPI_Precv_init(rbuf, NPART, PCOUNT, MPI_INT, source, 5, comm, MPI_INFO_NULL, &rreq));
    for (int round = 0; round < 4; round++) {
        fill(sbuf, NPART * PCOUNT, rank + 10 * round);
        memset(rbuf, 0xff, sizeof rbuf);
        CHECK_MPI(MPI_Start(&rreq));
        CHECK_MPI(MPI_Start(&sreq));
        if (round % 3 == 0) {
            for (int p = NPART - 1; p >= 0; p--) CHECK_MPI(MPI_Pready(p, sreq));
        } else if (round % 3 == 1) {
            CHECK_MPI(MPI_Pready_range(0, 1, sreq));
            CHECK_MPI(MPI_Pready_range(2, NPART - 1, sreq));
        } else {
            int list[NPART] = {2, 0, 3, 1};
            CHECK_MPI(MPI_Pready_list(2, list, sreq));
            CHECK_MPI(MPI_Pready_list(NPART - 2, list + 2, sreq));
        }
        for (int p = 0; p < NPART; p++) {
            int flag = 0;
            while (!flag) CHECK_MPI(MPI_Parrived(rreq, p, &flag));
        }
        MPI_Request both[2] = {sreq, rreq};
        CHECK_MPI(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
        CHECK(both[0] == sreq && both[1] == rreq, "persistent requests stay");
        check_buf(rbuf, NPART * PCOUNT, source + 10 * round);
    }
    CHECK_MPI(MPI_Request_free(&sreq));
    CHECK_MPI(MPI_Request_free(&rreq));
    CHECK(sreq == MPI_REQUEST_NULL && rreq == MPI_REQUEST_NULL, "freed");
}

/* Nothing arrives before the last partition is ready (to oneself, where
 * the order of the calls is known). Partitioned messages never match an
 * ordinary receive. */
static void self_partial(void)
{
    int sbuf[NPART * PCOUNT], rbuf[NPART * PCOUNT], other = -1;
    MPI_Request sreq, rreq, plain;
    fill(sbuf, NPART * PCOUNT, 42);
    CHECK_MPI(MPI_Irecv(&other, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &plain));
    CHECK_MPI(MPI_Psend_init(sbuf, NPART, PCOUNT, MPI_INT, 0, 9, MPI_COMM_SELF, MPI_INFO_NULL, &sreq));
    CHECK_MPI(MPI_Precv_init(rbuf, NPART, PCOUNT, MPI_INT, 0, 9, MPI_COMM_SELF, MPI_INFO_NULL, &rreq));
    CHECK_MPI(MPI_Start(&rreq));
    CHECK_MPI(MPI_Start(&sreq));
    for (int p = 0; p < NPART - 1; p++) CHECK_MPI(MPI_Pready(p, sreq));
    int flag = 1;
    for (int i = 0; i < 10; i++) {
        CHECK_MPI(MPI_Parrived(rreq, NPART - 1, &flag));
        CHECK_EQ(flag, 0);
    }
    CHECK_MPI(MPI_Pready(NPART - 1, sreq));
    CHECK_MPI(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    check_buf(rbuf, NPART * PCOUNT, 42);
    CHECK_MPI(MPI_Test(&plain, &flag, MPI_STATUS_IGNORE));
    CHECK_EQ(flag, 0);
    int one = 7;
    CHECK_MPI(MPI_Send(&one, 1, MPI_INT, 0, 9, MPI_COMM_SELF));
    CHECK_MPI(MPI_Wait(&plain, MPI_STATUS_IGNORE));
    CHECK_EQ(other, 7);
    MPI_Request_free(&sreq);
    MPI_Request_free(&rreq);
}

/* Two pairs with the same peer and tag: the first initialized send meets
 * the first initialized receive even when the second send is ready first. */
static void init_order(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int dest = (rank + 1) % size, source = (rank + size - 1) % size;
    int s1[2], s2[2], r1[2] = {-1, -1}, r2[2] = {-1, -1};
    s1[0] = s1[1] = 100 + rank;
    s2[0] = s2[1] = 200 + rank;
    MPI_Request sa, sb, ra, rb;
    CHECK_MPI(MPI_Psend_init(s1, 2, 1, MPI_INT, dest, 3, comm, MPI_INFO_NULL, &sa));
    CHECK_MPI(MPI_Psend_init(s2, 2, 1, MPI_INT, dest, 3, comm, MPI_INFO_NULL, &sb));
    CHECK_MPI(MPI_Precv_init(r1, 2, 1, MPI_INT, source, 3, comm, MPI_INFO_NULL, &ra));
    CHECK_MPI(MPI_Precv_init(r2, 2, 1, MPI_INT, source, 3, comm, MPI_INFO_NULL, &rb));
    MPI_Request all[4] = {ra, rb, sb, sa};
    CHECK_MPI(MPI_Startall(4, all));
    CHECK_MPI(MPI_Pready_range(0, 1, sb));
    CHECK_MPI(MPI_Pready_range(0, 1, sa));
    CHECK_MPI(MPI_Waitall(4, all, MPI_STATUSES_IGNORE));
    CHECK_EQ(r1[0], 100 + source);
    CHECK_EQ(r1[1], 100 + source);
    CHECK_EQ(r2[0], 200 + source);
    CHECK_EQ(r2[1], 200 + source);
    for (int i = 0; i < 4; i++) MPI_Request_free(&all[i]);
}

/* A derived datatype per partition element: every other int. */
static void derived(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int dest = (rank + 1) % size, source = (rank + size - 1) % size;
    MPI_Datatype pair;
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &pair));
    CHECK_MPI(MPI_Type_commit(&pair));
    /* 3 partitions of 2 pairs: 6 elements of extent 3 ints */
    int sbuf[3 * 2 * 3 + 1], rbuf[3 * 2 * 3 + 1];
    for (int i = 0; i < 19; i++) sbuf[i] = rank * 100 + i, rbuf[i] = -1;
    MPI_Request sreq, rreq;
    CHECK_MPI(MPI_Psend_init(sbuf, 3, 2, pair, dest, 1, comm, MPI_INFO_NULL, &sreq));
    CHECK_MPI(MPI_Precv_init(rbuf, 3, 2, pair, source, 1, comm, MPI_INFO_NULL, &rreq));
    CHECK_MPI(MPI_Type_free(&pair)); /* the requests keep it */
    CHECK_MPI(MPI_Start(&rreq));
    CHECK_MPI(MPI_Start(&sreq));
    for (int p = 0; p < 3; p++) CHECK_MPI(MPI_Pready(p, sreq));
    CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
    /* the vector's extent is 3 ints (lb 0, ub 3): elements start at 0, 3, 6.. */
    for (int e = 0; e < 6; e++) {
        CHECK_EQ(rbuf[3 * e], source * 100 + 3 * e);
        CHECK_EQ(rbuf[3 * e + 2], source * 100 + 3 * e + 2);
        CHECK_EQ(rbuf[3 * e + 1], -1);
    }
    MPI_Request_free(&sreq);
    MPI_Request_free(&rreq);
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int sbuf[4], rbuf[4], cls, flag;
    MPI_Request sreq, rreq;
    CHECK_MPI(MPI_Psend_init(sbuf, 2, 2, MPI_INT, 0, 0, MPI_COMM_SELF, MPI_INFO_NULL, &sreq));
    CHECK_MPI(MPI_Precv_init(rbuf, 2, 2, MPI_INT, 0, 0, MPI_COMM_SELF, MPI_INFO_NULL, &rreq));
    CHECK_MPI(MPI_Start(&rreq));
    CHECK_MPI(MPI_Start(&sreq));
    int rc = MPI_Pready(2, sreq); /* out of range */
    CHECK(rc != MPI_SUCCESS, "Pready of partition 2 of 2 must fail");
    rc = MPI_Pready_range(1, 0, sreq);
    CHECK(rc != MPI_SUCCESS, "an empty range must fail");
    rc = MPI_Parrived(rreq, -1, &flag);
    CHECK(rc != MPI_SUCCESS, "Parrived of partition -1 must fail");
    rc = MPI_Pready(0, rreq); /* a receive request */
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_REQUEST);
    rc = MPI_Parrived(sreq, 0, &flag); /* a send request */
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_REQUEST);
    CHECK_MPI(MPI_Pready_range(0, 1, sreq));
    CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
    MPI_Request_free(&sreq);
    MPI_Request_free(&rreq);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ring(MPI_COMM_WORLD);
    self_partial();
    init_order(MPI_COMM_WORLD);
    derived(MPI_COMM_WORLD);
    /* a new communicator, possibly on the context id of a freed one */
    for (int i = 0; i < 2; i++) {
        MPI_Comm dup;
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &dup));
        init_order(dup);
        MPI_Comm_free(&dup);
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        init_order(dup);
        ring(dup);
        MPI_Comm_free(&dup);
    }
    errors();
    mt_pass("partitioned: Psend/Precv_init, Pready forms, Parrived, init-order matching, derived types, errors");
    MPI_Finalize();
    return 0;
}
