/* Send modes: synchronous, ready, buffered; their nonblocking and persistent
 * forms.  Each part runs on COMM_SELF (every rank, meaningful at one process)
 * and between rank pairs (2k, 2k+1) of COMM_WORLD. */
#include "mpitest.h"

#define N 1000
#define BIG (256 * 1024) /* ints: 1 MiB, past any eager limit */

static int rank, size;

static void fill(int *b, int n, int seed)
{
    for (int i = 0; i < n; i++) b[i] = seed * 100003 + i;
}
static void check(const int *b, int n, int seed, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(b[i] == seed * 100003 + i, "%s: element %d is %d, expected %d", what, i, b[i], seed * 100003 + i);
}

/* Test a request a number of times, with a pause so a peer could react. */
static int test_for_a_while(MPI_Request *req, double seconds)
{
    int flag = 0;
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < seconds) CHECK_MPI(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
    return flag;
}

static void ssend_self(void)
{
    static int s[BIG], r[BIG];
    for (int big = 0; big < 2; big++) {
        int n = big ? BIG : N;
        MPI_Request sreq;
        fill(s, n, 1 + big);
        CHECK_MPI(MPI_Issend(s, n, MPI_INT, 0, 1, MPI_COMM_SELF, &sreq));
        CHECK(!test_for_a_while(&sreq, 0.05), "Issend to self completed before a receive was posted (n=%d)", n);
        CHECK_MPI(MPI_Recv(r, n, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        check(r, n, 1 + big, "ssend self");
    }
    mt_pass("p2p_modes: Issend to self does not complete before the receive");
}

static void ssend_pair(int peer, int sender)
{
    static int s[BIG], r[BIG];
    for (int big = 0; big < 2; big++) {
        int n = big ? BIG : N, go = 0;
        if (sender) {
            MPI_Request sreq;
            fill(s, n, 3 + big);
            CHECK_MPI(MPI_Issend(s, n, MPI_INT, peer, 2, MPI_COMM_WORLD, &sreq));
            CHECK(!test_for_a_while(&sreq, 0.1),
                  "Issend completed while the receiver has not posted its receive (n=%d)", n);
            CHECK_MPI(MPI_Send(&go, 1, MPI_INT, peer, 3, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
            /* Blocking Ssend as well: the peer receives after a go message. */
            CHECK_MPI(MPI_Send(&go, 1, MPI_INT, peer, 3, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Ssend(s, n, MPI_INT, peer, 2, MPI_COMM_WORLD));
        } else {
            CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            memset(r, 0, sizeof(int) * (size_t)n);
            CHECK_MPI(MPI_Recv(r, n, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check(r, n, 3 + big, "issend pair");
            CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            memset(r, 0, sizeof(int) * (size_t)n);
            CHECK_MPI(MPI_Recv(r, n, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check(r, n, 3 + big, "ssend pair");
        }
    }
}

static void rsend_self(void)
{
    static int s[BIG], r[BIG];
    for (int big = 0; big < 2; big++) {
        int n = big ? BIG : N;
        MPI_Request rreq, sreq;
        fill(s, n, 5 + big);
        CHECK_MPI(MPI_Irecv(r, n, MPI_INT, 0, 4, MPI_COMM_SELF, &rreq));
        CHECK_MPI(MPI_Rsend(s, n, MPI_INT, 0, 4, MPI_COMM_SELF));
        CHECK_MPI(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
        check(r, n, 5 + big, "rsend self");
        CHECK_MPI(MPI_Irecv(r, n, MPI_INT, 0, 4, MPI_COMM_SELF, &rreq));
        CHECK_MPI(MPI_Irsend(s, n, MPI_INT, 0, 4, MPI_COMM_SELF, &sreq));
        CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
        check(r, n, 5 + big, "irsend self");
    }
    mt_pass("p2p_modes: Rsend and Irsend to self");
}

static void rsend_pair(int peer, int sender)
{
    static int s[BIG], r[BIG];
    for (int big = 0; big < 2; big++) {
        int n = big ? BIG : N, ready = 0;
        for (int nb = 0; nb < 2; nb++) {
            if (sender) {
                MPI_Request sreq;
                fill(s, n, 7 + big + nb);
                CHECK_MPI(MPI_Recv(&ready, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                if (nb) {
                    CHECK_MPI(MPI_Irsend(s, n, MPI_INT, peer, 5, MPI_COMM_WORLD, &sreq));
                    CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
                } else {
                    CHECK_MPI(MPI_Rsend(s, n, MPI_INT, peer, 5, MPI_COMM_WORLD));
                }
            } else {
                MPI_Request rreq;
                memset(r, 0, sizeof(int) * (size_t)n);
                CHECK_MPI(MPI_Irecv(r, n, MPI_INT, peer, 5, MPI_COMM_WORLD, &rreq));
                CHECK_MPI(MPI_Send(&ready, 1, MPI_INT, peer, 6, MPI_COMM_WORLD));
                CHECK_MPI(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
                check(r, n, 7 + big + nb, "rsend pair");
            }
        }
    }
}

/* Buffered sends.  Several messages are buffered before the receiver posts
 * anything; detach must not return while they are still in the buffer, so
 * the buffer is overwritten right after detach and the data must survive. */
static void bsend_part(int peer, int sender, int receiver, MPI_Comm comm)
{
    enum { K = 4, BN = 50000 };
    static int s[BN], r[BN];
    int bufsize = K * (int)(BN * sizeof(int) + MPI_BSEND_OVERHEAD) + 2 * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *buf = malloc((size_t)bufsize);
    int go = 0;
    CHECK(buf, "out of memory");
    if (sender) {
        CHECK_MPI(MPI_Buffer_attach(buf, bufsize));
        for (int k = 0; k < K; k++) {
            fill(s, BN, 20 + k);
            CHECK_MPI(MPI_Bsend(s, BN, MPI_INT, peer, 10 + k, comm));
        }
        /* The user buffer of Bsend is free for reuse at once. */
        memset(s, 0, sizeof s);
        MPI_Request breq[2];
        fill(s, N, 30);
        CHECK_MPI(MPI_Ibsend(s, N, MPI_INT, peer, 20, comm, &breq[0]));
        CHECK_MPI(MPI_Wait(&breq[0], MPI_STATUS_IGNORE));
        memset(s, 0, N * sizeof(int));
        if (peer != mt_rank(comm) || !receiver) CHECK_MPI(MPI_Send(&go, 1, MPI_INT, peer, 21, comm));
    }
    if (receiver) {
        if (peer != mt_rank(comm) || !sender) CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, peer, 21, comm, MPI_STATUS_IGNORE));
        /* Receive in reverse order: buffered messages are selected by tag. */
        memset(r, 0, sizeof r);
        CHECK_MPI(MPI_Recv(r, N, MPI_INT, peer, 20, comm, MPI_STATUS_IGNORE));
        check(r, N, 30, "ibsend");
        for (int k = K - 1; k >= 0; k--) {
            memset(r, 0, sizeof r);
            CHECK_MPI(MPI_Recv(r, BN, MPI_INT, peer, 10 + k, comm, MPI_STATUS_IGNORE));
            check(r, BN, 20 + k, "bsend");
        }
    }
    if (sender) {
        void *dbuf = NULL;
        int dsize = -1;
        CHECK_MPI(MPI_Buffer_detach(&dbuf, &dsize));
        CHECK(dbuf == buf, "Buffer_detach returned %p, attached %p", dbuf, (void *)buf);
        CHECK_EQ(dsize, bufsize);
        memset(buf, 0xEE, (size_t)bufsize);
    }
    if (sender && receiver) {
        free(buf);
        return;
    }
    /* Second round, receiver posts after detach has returned on the sender. */
    if (sender) {
        CHECK_MPI(MPI_Buffer_attach(buf, bufsize));
        for (int k = 0; k < K; k++) {
            fill(s, BN, 40 + k);
            CHECK_MPI(MPI_Bsend(s, BN, MPI_INT, peer, 30 + k, comm));
        }
        memset(s, 0, sizeof s);
        CHECK_MPI(MPI_Send(&go, 1, MPI_INT, peer, 21, comm));
        void *dbuf;
        int dsize;
        CHECK_MPI(MPI_Buffer_detach(&dbuf, &dsize));
        memset(buf, 0xEE, (size_t)bufsize);
        CHECK_MPI(MPI_Send(&go, 1, MPI_INT, peer, 22, comm));
    } else {
        CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, peer, 21, comm, MPI_STATUS_IGNORE));
        for (int k = 0; k < K; k++) {
            memset(r, 0, sizeof r);
            CHECK_MPI(MPI_Recv(r, BN, MPI_INT, peer, 30 + k, comm, MPI_STATUS_IGNORE));
            check(r, BN, 40 + k, "bsend round 2");
        }
        CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, peer, 22, comm, MPI_STATUS_IGNORE));
    }
    free(buf);
}

static void bsend_errors(void)
{
    int s[1000];
    fill(s, 1000, 1);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    /* No buffer attached. */
    int rc = MPI_Bsend(s, 1000, MPI_INT, 0, 50, MPI_COMM_SELF);
    CHECK_ERRCLASS(rc, MPI_ERR_BUFFER);
#ifdef OPEN_MPI
    /* Open MPI 4.1 can hang in Buffer_detach after a failed Bsend. */
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    mt_pass("p2p_modes: Bsend without a buffer -> MPI_ERR_BUFFER");
    return;
#endif
    /* Buffer too small for the message. */
    int bufsize = 100 + MPI_BSEND_OVERHEAD;
    char *buf = malloc((size_t)bufsize);
    CHECK_MPI(MPI_Buffer_attach(buf, bufsize));
    rc = MPI_Bsend(s, 1000, MPI_INT, 0, 50, MPI_COMM_SELF);
    CHECK_ERRCLASS(rc, MPI_ERR_BUFFER);
    /* No further communication is checked here: Open MPI 4.1 stops delivering
     * messages on the failing communicator after a failed Bsend, and the
     * standard does not promise recovery after an error, so this part runs last. */
    void *dbuf;
    int dsize;
    CHECK_MPI(MPI_Buffer_detach(&dbuf, &dsize));
    CHECK(dbuf == buf && dsize == bufsize, "detach returned %p/%d", dbuf, dsize);
    free(buf);
    /* Nothing else is pending on tag 50. */
    int flag = 1;
    CHECK_MPI(MPI_Iprobe(0, 50, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a failed Bsend left a message behind");
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    mt_pass("p2p_modes: Bsend without or with too small a buffer -> MPI_ERR_BUFFER");
}

/* Persistent requests, reused; peer may be oneself on COMM_SELF. */
static void persistent_part(int peer, int sender, int receiver, MPI_Comm comm)
{
    enum { ROUNDS = 5 };
    static int s[5][BIG], r[5][BIG];
    int n = N;
    MPI_Request sreq[5], rreq[5];
    int bufsize = 4 * (BIG * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *buf = malloc((size_t)bufsize);
    int ready = 0;
    if (sender) {
        CHECK_MPI(MPI_Buffer_attach(buf, bufsize));
        CHECK_MPI(MPI_Send_init(s[0], n, MPI_INT, peer, 60, comm, &sreq[0]));
        CHECK_MPI(MPI_Ssend_init(s[1], BIG, MPI_INT, peer, 61, comm, &sreq[1]));
        CHECK_MPI(MPI_Bsend_init(s[2], n, MPI_INT, peer, 62, comm, &sreq[2]));
        CHECK_MPI(MPI_Rsend_init(s[3], n, MPI_INT, peer, 63, comm, &sreq[3]));
        CHECK_MPI(MPI_Send_init(s[4], BIG, MPI_INT, peer, 64, comm, &sreq[4]));
    }
    if (receiver) {
        CHECK_MPI(MPI_Recv_init(r[0], n, MPI_INT, peer, 60, comm, &rreq[0]));
        CHECK_MPI(MPI_Recv_init(r[1], BIG, MPI_INT, peer, 61, comm, &rreq[1]));
        CHECK_MPI(MPI_Recv_init(r[2], n, MPI_INT, peer, 62, comm, &rreq[2]));
        CHECK_MPI(MPI_Recv_init(r[3], n, MPI_INT, peer, 63, comm, &rreq[3]));
        CHECK_MPI(MPI_Recv_init(r[4], BIG, MPI_INT, peer, 64, comm, &rreq[4]));
    }
    for (int round = 0; round < ROUNDS; round++) {
        if (receiver) {
            for (int i = 0; i < 5; i++) memset(r[i], 0, sizeof r[i]);
            CHECK_MPI(MPI_Startall(5, rreq));
            for (int i = 0; i < 5; i++) CHECK(rreq[i] != MPI_REQUEST_NULL, "Startall must keep persistent handles");
            if (!sender) CHECK_MPI(MPI_Send(&ready, 1, MPI_INT, peer, 65, comm));
        }
        if (sender) {
            for (int i = 0; i < 5; i++) fill(s[i], i == 1 || i == 4 ? BIG : n, round * 10 + i);
            if (!receiver) CHECK_MPI(MPI_Recv(&ready, 1, MPI_INT, peer, 65, comm, MPI_STATUS_IGNORE));
            /* Sending to oneself, the buffered persistent request is made
             * afresh each round: Open MPI 4.1 delivers zeros when a persistent
             * Bsend to self is restarted.  Between two ranks it is reused. */
            if (receiver && round > 0) {
                CHECK_MPI(MPI_Request_free(&sreq[2]));
                CHECK_MPI(MPI_Bsend_init(s[2], n, MPI_INT, peer, 62, comm, &sreq[2]));
            }
            if (round % 2) {
                CHECK_MPI(MPI_Startall(5, sreq));
            } else {
                for (int i = 4; i >= 0; i--) CHECK_MPI(MPI_Start(&sreq[i]));
            }
        }
        if (sender) CHECK_MPI(MPI_Waitall(5, sreq, MPI_STATUSES_IGNORE));
        if (receiver) {
            MPI_Status st[5];
            CHECK_MPI(MPI_Waitall(5, rreq, st));
            for (int i = 0; i < 5; i++) {
                int cnt = -1;
                CHECK(rreq[i] != MPI_REQUEST_NULL, "Waitall must not free persistent requests");
                CHECK_EQ(st[i].MPI_TAG, 60 + i);
                CHECK_MPI(MPI_Get_count(&st[i], MPI_INT, &cnt));
                CHECK_EQ(cnt, i == 1 || i == 4 ? BIG : n);
                check(r[i], cnt, round * 10 + i, "persistent");
            }
        }
    }
    /* An inactive persistent request: Wait returns at once with an empty status. */
    if (receiver) {
        MPI_Status st;
        st.MPI_TAG = 12345;
        CHECK_MPI(MPI_Wait(&rreq[0], &st));
        CHECK(rreq[0] != MPI_REQUEST_NULL, "Wait on an inactive persistent request keeps the handle");
        CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
        CHECK_EQ(st.MPI_SOURCE, MPI_ANY_SOURCE);
    }
    for (int i = 0; i < 5; i++) {
        if (sender) {
            CHECK_MPI(MPI_Request_free(&sreq[i]));
            CHECK(sreq[i] == MPI_REQUEST_NULL, "Request_free sets MPI_REQUEST_NULL");
        }
        if (receiver) {
            CHECK_MPI(MPI_Request_free(&rreq[i]));
            CHECK(rreq[i] == MPI_REQUEST_NULL, "Request_free sets MPI_REQUEST_NULL");
        }
    }
    if (sender) {
        void *d;
        int ds;
        CHECK_MPI(MPI_Buffer_detach(&d, &ds));
    }
    free(buf);
}

/* Nonblocking standard and synchronous sends mixed, completed in any order. */
static void nonblocking_part(int peer, int sender, int receiver, MPI_Comm comm)
{
    static int s[4][BIG], r[4][BIG];
    MPI_Request req[8];
    int nr = 0;
    if (receiver)
        for (int i = 0; i < 4; i++) {
            memset(r[i], 0, sizeof r[i]);
            CHECK_MPI(MPI_Irecv(r[i], BIG, MPI_INT, peer, 70 + i, comm, &req[nr++]));
        }
    if (sender) {
        for (int i = 0; i < 4; i++) fill(s[i], (i % 2) ? BIG : N, 50 + i);
        CHECK_MPI(MPI_Isend(s[0], N, MPI_INT, peer, 70, comm, &req[nr++]));
        CHECK_MPI(MPI_Isend(s[1], BIG, MPI_INT, peer, 71, comm, &req[nr++]));
        CHECK_MPI(MPI_Issend(s[2], N, MPI_INT, peer, 72, comm, &req[nr++]));
        CHECK_MPI(MPI_Issend(s[3], BIG, MPI_INT, peer, 73, comm, &req[nr++]));
    }
    CHECK_MPI(MPI_Waitall(nr, req, MPI_STATUSES_IGNORE));
    if (receiver)
        for (int i = 0; i < 4; i++) check(r[i], (i % 2) ? BIG : N, 50 + i, "nonblocking");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rank = mt_rank(MPI_COMM_WORLD);
    size = mt_size(MPI_COMM_WORLD);
    int peer = rank ^ 1, paired = peer < size, first = !(rank & 1);

    ssend_self();
    rsend_self();
    bsend_part(0, 1, 1, MPI_COMM_SELF);
    mt_pass("p2p_modes: Bsend/Ibsend to self, Buffer_attach/detach");
    persistent_part(0, 1, 1, MPI_COMM_SELF);
    mt_pass("p2p_modes: persistent Send/Ssend/Bsend/Rsend_init + Recv_init to self, Start/Startall, Request_free");
    nonblocking_part(0, 1, 1, MPI_COMM_SELF);
    mt_pass("p2p_modes: Isend/Issend/Irecv to self");

    if (size < 2) {
        printf("SKIP p2p_modes: pairwise parts need 2 processes\n");
    } else {
        if (paired) {
            for (int dir = 0; dir < 2; dir++) {
                int sender = (dir == 0) == first;
                ssend_pair(peer, sender);
                rsend_pair(peer, sender);
                bsend_part(peer, sender, !sender, MPI_COMM_WORLD);
                persistent_part(peer, sender, !sender, MPI_COMM_WORLD);
                nonblocking_part(peer, sender, !sender, MPI_COMM_WORLD);
            }
            /* Both directions at once. */
            nonblocking_part(peer, 1, 1, MPI_COMM_WORLD);
        }
        mt_pass("p2p_modes: pairwise Ssend/Issend (not before receive), Rsend/Irsend, Bsend/detach, "
                "persistent, nonblocking");
    }
    bsend_errors();
    MPI_Finalize();
    return 0;
}
