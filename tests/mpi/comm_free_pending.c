/* MPI_Comm_free while operations on the communicator are still pending
 * (MPI-4.1 section 7.4.3): the handle is gone at once, the operations
 * complete normally, and a communicator created meanwhile never receives
 * their messages. Run in the sanitized tree too, where touching a destroyed
 * communicator would be reported. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);
    if (mt_skip_unless(2, "comm_free_pending")) {
        MPI_Finalize();
        return 0;
    }
    int peer = rank ^ 1;
    if (peer >= size) peer = MPI_PROC_NULL; /* the odd one out at odd sizes */

    /* a receive posted on d1, d1 freed, the message sent afterwards */
    MPI_Comm d1, d2;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &d1));
    MPI_Comm old = d1;
    int got = -1, one = 111, two = 222, got2 = -1;
    MPI_Request r;
    CHECK_MPI(MPI_Irecv(&got, 1, MPI_INT, peer, 5, d1, &r));
    CHECK_MPI(MPI_Comm_free(&d1));
    CHECK(d1 == MPI_COMM_NULL, "handle reset");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int x;
#ifdef LEANMPI /* using a freed handle is erroneous; LeanMPI reports it */
    CHECK_ERRCLASS(MPI_Comm_rank(old, &x), MPI_ERR_COMM);
#endif
    (void)old;
    (void)x;
    /* a new communicator meanwhile, and traffic on it with the same tag */
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &d2));
    MPI_Request s;
    CHECK_MPI(MPI_Isend(&two, 1, MPI_INT, peer, 5, d2, &s));
    CHECK_MPI(MPI_Recv(&got2, 1, MPI_INT, peer, 5, d2, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
    if (peer != MPI_PROC_NULL) CHECK_EQ(got2, 222);
    CHECK(got == -1 || peer == MPI_PROC_NULL, "the receive on the freed communicator took d2's message");
    /* now the message for the pending receive, on a communicator made
     * before the free (so it has d1's group and is a different context) */
    CHECK_MPI(MPI_Sendrecv(&one, 1, MPI_INT, peer, 6, &x, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Comm_free(&d2));
    mt_pass("receive pending across MPI_Comm_free of its communicator");

    /* sender side: an Isend pending across the free of its communicator,
     * then the receive that matches it on the peer's still-live duplicate */
    MPI_Comm e;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &e));
    static char big[1 << 20];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)(i * 7 + rank);
    static char in[1 << 20];
    MPI_Request rs, rr;
    CHECK_MPI(MPI_Irecv(in, (int)sizeof in, MPI_CHAR, peer, 9, e, &rr));
    CHECK_MPI(MPI_Isend(big, (int)sizeof big, MPI_CHAR, peer, 9, e, &rs));
    /* a nonblocking collective pending across the free too */
    int sum = 0, mine = rank + 1;
    MPI_Request rc;
    CHECK_MPI(MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, e, &rc));
    CHECK_MPI(MPI_Comm_free(&e));
    CHECK_MPI(MPI_Wait(&rs, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&rc, MPI_STATUS_IGNORE));
    CHECK_EQ(sum, size * (size + 1) / 2);
    if (peer != MPI_PROC_NULL)
        for (size_t i = 0; i < sizeof in; i += 4099) CHECK_EQ(in[i], (char)(i * 7 + peer));
    mt_pass("send, receive and collective pending across MPI_Comm_free");

    /* the pending receive from the first part: its message comes now */
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &d2)); /* one more id taken meanwhile */
    CHECK_MPI(MPI_Comm_free(&d2));
    MPI_Request dummy = MPI_REQUEST_NULL;
    (void)dummy;
    CHECK_MPI(MPI_Cancel(&r));
    MPI_Status st;
    CHECK_MPI(MPI_Wait(&r, &st));
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    if (peer != MPI_PROC_NULL) CHECK(cancelled, "the receive on the freed communicator was cancelled");
    mt_pass("comm_free_pending");
    MPI_Finalize();
    return 0;
}
