/* Buffered-send buffers: the process's (attach, flush, iflush, detach)
 * and, from MPI 4.1, a communicator's (used by buffered sends on that
 * communicator before the process's), a session's, and
 * MPI_BUFFER_AUTOMATIC (any amount, no buffer given). Each rank sends a
 * run of buffered messages to its right neighbour and checks what arrives
 * from the left. */
#include "mpitest.h"
#include <string.h>

#define N 64
#define MSGS 4

static int rank, size;

/* MSGS buffered sends of N ints on comm to the right, their receives from
 * the left; flush in between when asked (0 none, 1 blocking, 2 nonblocking). */
static void ring(MPI_Comm comm, int salt, int (*flush)(MPI_Comm, MPI_Request *), int how)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[MSGS][N], in[N];
    for (int m = 0; m < MSGS; m++) {
        for (int i = 0; i < N; i++) out[m][i] = salt + rank * 1000 + m * N + i;
        CHECK_MPI(MPI_Bsend(out[m], N, MPI_INT, right, m, comm));
    }
    /* the copies are the library's: the user's data may change now */
    memset(out, 0, sizeof out);
    if (how) {
        MPI_Request r = MPI_REQUEST_NULL;
        /* blocking flush only after the receives are posted by everyone:
         * post ours first through a nonblocking receive of the first */
        MPI_Request first;
        CHECK_MPI(MPI_Irecv(in, N, MPI_INT, left, 0, comm, &first));
        CHECK_MPI(flush(comm, how == 2 ? &r : NULL));
        CHECK_MPI(MPI_Wait(&first, MPI_STATUS_IGNORE));
        if (how == 2) CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        CHECK_MPI(MPI_Recv(in, N, MPI_INT, left, 0, comm, MPI_STATUS_IGNORE));
    }
    for (int i = 0; i < N; i++) CHECK_EQ(in[i], salt + left * 1000 + i);
    for (int m = 1; m < MSGS; m++) {
        CHECK_MPI(MPI_Recv(in, N, MPI_INT, left, m, comm, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++) CHECK_EQ(in[i], salt + left * 1000 + m * N + i);
    }
}

static int process_flush(MPI_Comm comm, MPI_Request *r)
{
    (void)comm;
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    return r ? MPI_Buffer_iflush(r) : MPI_Buffer_flush();
#else
    (void)r;
    return MPI_SUCCESS;
#endif
}

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
static int comm_flush(MPI_Comm comm, MPI_Request *r)
{
    return r ? MPI_Comm_iflush_buffer(comm, r) : MPI_Comm_flush_buffer(comm);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bytes = MSGS * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *pbuf = malloc((size_t)bytes), *cbuf = malloc((size_t)bytes);
    void *back;
    int back_size;

    CHECK_MPI(MPI_Buffer_attach(pbuf, bytes));
    for (int how = 0; how < 3; how++) ring(MPI_COMM_WORLD, 10 * how, process_flush, how);
    CHECK_MPI(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == pbuf && back_size == bytes, "MPI_Buffer_detach gave another buffer");
    mt_pass("process buffer: bsend, flush, iflush, detach");

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    /* a communicator's buffer serves its sends with none attached to the process */
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_MPI(MPI_Comm_attach_buffer(dup, cbuf, bytes));
    for (int how = 0; how < 3; how++) ring(dup, 100 + 10 * how, comm_flush, how);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int one = 1, cls;
    int rc = MPI_Bsend(&one, 1, MPI_INT, rank, 0, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS, "a buffered send without a process buffer succeeded");
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_BUFFER);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_MPI(MPI_Comm_detach_buffer(dup, &back, &back_size));
    CHECK(back == cbuf && back_size == bytes, "MPI_Comm_detach_buffer gave another buffer");
    /* automatic: no size limit, and detach names it */
    CHECK_MPI(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0));
    ring(dup, 200, comm_flush, 2);
    CHECK_MPI(MPI_Comm_detach_buffer(dup, &back, &back_size));
    CHECK(back == MPI_BUFFER_AUTOMATIC, "detach did not give MPI_BUFFER_AUTOMATIC back");
    /* freed with a buffer attached (its messages leave first) */
    CHECK_MPI(MPI_Comm_attach_buffer(dup, cbuf, bytes));
    int v = 4242 + rank, got = -1;
    CHECK_MPI(MPI_Bsend(&v, 1, MPI_INT, (rank + 1) % size, 7, dup));
    CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, (rank + size - 1) % size, 7, dup, MPI_STATUS_IGNORE));
    CHECK_EQ(got, 4242 + (rank + size - 1) % size);
    CHECK_MPI(MPI_Comm_free(&dup));
    mt_pass("communicator buffer: bsend, flush, iflush, detach, automatic");

    MPI_Session s;
    CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    CHECK_MPI(MPI_Session_attach_buffer(s, cbuf, bytes));
    CHECK_MPI(MPI_Session_flush_buffer(s));
    MPI_Request r;
    CHECK_MPI(MPI_Session_iflush_buffer(s, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Session_detach_buffer(s, &back, &back_size));
    CHECK(back == cbuf && back_size == bytes, "MPI_Session_detach_buffer gave another buffer");
    CHECK_MPI(MPI_Session_attach_buffer(s, MPI_BUFFER_AUTOMATIC, 0));
    CHECK_MPI(MPI_Session_detach_buffer(s, &back, &back_size));
    CHECK(back == MPI_BUFFER_AUTOMATIC, "session detach did not give MPI_BUFFER_AUTOMATIC back");
    CHECK_MPI(MPI_Session_finalize(&s));
    mt_pass("session buffer: attach, flush, iflush, detach, automatic");
#endif
    free(pbuf);
    free(cbuf);
    MPI_Finalize();
    return 0;
}
