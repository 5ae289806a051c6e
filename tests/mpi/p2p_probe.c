/* Probe, Iprobe, matched probes (Mprobe/Improbe + Mrecv/Imrecv), status
 * fields, Get_count/Get_elements and MPI_PROC_NULL. */
#include "mpitest.h"

/* MPICH 4.0 leaves source and tag of a nonblocking receive from
 * MPI_PROC_NULL unset (the standard says PROC_NULL / ANY_TAG); the relaxed
 * check applies only when built against MPICH and only to those calls. */
#ifdef MPICH_VERSION
#define PEER_NB_PROC_NULL_QUIRK 1
#else
#define PEER_NB_PROC_NULL_QUIRK 0
#endif

static void check_proc_null_status_x(const MPI_Status *st, const char *what, int nonblocking)
{
    int cnt = -1;
    if (!(nonblocking && PEER_NB_PROC_NULL_QUIRK)) {
        CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: source %d", what, st->MPI_SOURCE);
        CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: tag %d", what, st->MPI_TAG);
    }
    CHECK_MPI(MPI_Get_count(st, MPI_INT, &cnt));
    CHECK(cnt == 0, "%s: count %d", what, cnt);
}
#define check_proc_null_status(st, what) check_proc_null_status_x(st, what, 0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);
    MPI_Status st;

    /* Everybody (rank 0 included) sends rank+1 ints to rank 0 with tag rank+10;
     * rank 0 discovers them with Probe(ANY_SOURCE, ANY_TAG). */
    int msg[16];
    MPI_Request sreq;
    for (int i = 0; i < 16; i++) msg[i] = rank * 1000 + i;
    int n = rank % 16 + 1;
    CHECK_MPI(MPI_Isend(msg, n, MPI_INT, 0, rank + 10, MPI_COMM_WORLD, &sreq));
    if (rank == 0) {
        char *seen = calloc((size_t)size, 1);
        for (int k = 0; k < size; k++) {
            int cnt = -1, in[16];
            CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int src = st.MPI_SOURCE;
            CHECK(src >= 0 && src < size && !seen[src], "probe source %d", src);
            seen[src] = 1;
            CHECK_EQ(st.MPI_TAG, src + 10);
            CHECK_MPI(MPI_Get_count(&st, MPI_INT, &cnt));
            CHECK_EQ(cnt, src % 16 + 1);
            /* Probing again finds the same message. */
            MPI_Status st2;
            CHECK_MPI(MPI_Probe(src, st.MPI_TAG, MPI_COMM_WORLD, &st2));
            CHECK_EQ(st2.MPI_SOURCE, src);
            CHECK_MPI(MPI_Recv(in, cnt, MPI_INT, src, st.MPI_TAG, MPI_COMM_WORLD, &st2));
            for (int i = 0; i < cnt; i++) CHECK_EQ(in[i], src * 1000 + i);
        }
        free(seen);
    }
    CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    /* No later message may reach rank 0's ANY_TAG probes above. */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    mt_pass("p2p_probe: Probe ANY_SOURCE/ANY_TAG, status fields, Get_count");

    /* Iprobe: false for a tag never sent, then true once a self message is there. */
    int flag = 1;
    CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "Iprobe found a message that was never sent");
    int v = 77, w = 0;
    CHECK_MPI(MPI_Isend(&v, 1, MPI_INT, rank, 30, MPI_COMM_WORLD, &sreq));
    flag = 0;
    double t0 = MPI_Wtime();
    /* Other ranks may already be sending rank 0 the messages of a later
     * section, so each wildcard is paired with a field that only this
     * message has. */
    while (!flag && MPI_Wtime() - t0 < MT_POLL_LIMIT_S)
        CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag, "Iprobe never saw a message sent to self");
    CHECK_EQ(st.MPI_SOURCE, rank);
    CHECK_EQ(st.MPI_TAG, 30);
    flag = 0;
    CHECK_MPI(MPI_Iprobe(rank, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag, "Iprobe(self, ANY_TAG) does not see the message Iprobe(ANY_SOURCE, 30) saw");
    CHECK_EQ(st.MPI_SOURCE, rank);
    CHECK_EQ(st.MPI_TAG, 30);
    CHECK_MPI(MPI_Recv(&w, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ(w, 77);
    CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    mt_pass("p2p_probe: Iprobe");

    /* Counts: 7 bytes as MPI_INT is MPI_UNDEFINED; 5 ints received as a
     * 2-int type: count undefined, elements 5. */
    {
        char bytes[7] = {1, 2, 3, 4, 5, 6, 7}, rb[8];
        int cnt = 0, el = 0;
        CHECK_MPI(MPI_Isend(bytes, 7, MPI_BYTE, rank, 31, MPI_COMM_WORLD, &sreq));
        CHECK_MPI(MPI_Probe(rank, 31, MPI_COMM_WORLD, &st));
        CHECK_MPI(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt == MPI_UNDEFINED, "Get_count of 7 bytes as MPI_INT is %d", cnt);
        CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK_EQ(cnt, 7);
        CHECK_MPI(MPI_Get_elements(&st, MPI_BYTE, &el));
        CHECK_EQ(el, 7);
        CHECK_MPI(MPI_Recv(rb, 8, MPI_BYTE, rank, 31, MPI_COMM_WORLD, &st));
        CHECK_MPI(MPI_Get_count(&st, MPI_SHORT, &cnt));
        CHECK(cnt == MPI_UNDEFINED, "Get_count of 7 bytes as MPI_SHORT is %d", cnt);
        CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

        int five[5] = {1, 2, 3, 4, 5}, r[6] = {0};
        MPI_Datatype two;
        CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &two));
        CHECK_MPI(MPI_Type_commit(&two));
        CHECK_MPI(MPI_Isend(five, 5, MPI_INT, rank, 32, MPI_COMM_WORLD, &sreq));
        CHECK_MPI(MPI_Recv(r, 3, two, rank, 32, MPI_COMM_WORLD, &st));
        CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Get_count(&st, two, &cnt));
        CHECK(cnt == MPI_UNDEFINED, "Get_count of 5 ints as 2-int type is %d", cnt);
        CHECK_MPI(MPI_Get_elements(&st, two, &el));
        CHECK_EQ(el, 5);
        MPI_Count elx = 0;
        CHECK_MPI(MPI_Get_elements_x(&st, two, &elx));
        CHECK_EQ(elx, 5);
        for (int i = 0; i < 5; i++) CHECK_EQ(r[i], i + 1);
        CHECK_EQ(r[5], 0);
        CHECK_MPI(MPI_Type_free(&two));
    }
    mt_pass("p2p_probe: Get_count MPI_UNDEFINED, Get_elements");

    /* Matched probe: two messages with the same envelope; Mprobe takes the
     * first out of the queue, so a later Probe sees the second. */
    {
        int a = 1, b = 2, r = 0;
        MPI_Request s2[2];
        MPI_Message m1 = MPI_MESSAGE_NULL, m2 = MPI_MESSAGE_NULL;
        CHECK_MPI(MPI_Isend(&a, 1, MPI_INT, rank, 40, MPI_COMM_WORLD, &s2[0]));
        CHECK_MPI(MPI_Isend(&b, 1, MPI_INT, rank, 40, MPI_COMM_WORLD, &s2[1]));
        CHECK_MPI(MPI_Mprobe(rank, 40, MPI_COMM_WORLD, &m1, &st));
        CHECK(m1 != MPI_MESSAGE_NULL && m1 != MPI_MESSAGE_NO_PROC, "Mprobe returned no message");
        CHECK_EQ(st.MPI_SOURCE, rank);
        CHECK_EQ(st.MPI_TAG, 40);
        flag = 0;
        t0 = MPI_Wtime();
        while (!flag && MPI_Wtime() - t0 < MT_POLL_LIMIT_S)
            CHECK_MPI(MPI_Improbe(rank, 40, MPI_COMM_WORLD, &flag, &m2, &st));
        CHECK(flag, "Improbe did not find the second message");
        /* Both matched: nothing left with that envelope. */
        flag = 1;
        CHECK_MPI(MPI_Iprobe(rank, 40, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "a message taken by Mprobe is still visible to Iprobe");
        MPI_Request rq;
        CHECK_MPI(MPI_Imrecv(&r, 1, MPI_INT, &m2, &rq));
        CHECK(m2 == MPI_MESSAGE_NULL, "Imrecv must set the message to MPI_MESSAGE_NULL");
        CHECK_MPI(MPI_Wait(&rq, &st));
        CHECK_EQ(r, 2);
        CHECK_MPI(MPI_Mrecv(&r, 1, MPI_INT, &m1, &st));
        CHECK(m1 == MPI_MESSAGE_NULL, "Mrecv must set the message to MPI_MESSAGE_NULL");
        CHECK_EQ(r, 1);
        CHECK_EQ(st.MPI_TAG, 40);
        CHECK_MPI(MPI_Waitall(2, s2, MPI_STATUSES_IGNORE));
        flag = 1;
        MPI_Message m3 = MPI_MESSAGE_NULL;
        CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, 41, MPI_COMM_WORLD, &flag, &m3, &st));
        CHECK(!flag, "Improbe found a message that was never sent");
    }
    /* Matched probe across ranks: rank 1 sends a big message to rank 0. */
    if (size > 1 && rank < 2) {
        enum { BIGN = 300000 };
        int *buf = malloc(BIGN * sizeof(int));
        if (rank == 1) {
            for (int i = 0; i < BIGN; i++) buf[i] = i ^ 0x5555;
            CHECK_MPI(MPI_Send(buf, BIGN, MPI_INT, 0, 42, MPI_COMM_WORLD));
        } else {
            MPI_Message m;
            int cnt = 0;
            CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st));
            CHECK_EQ(st.MPI_SOURCE, 1);
            CHECK_EQ(st.MPI_TAG, 42);
            CHECK_MPI(MPI_Get_count(&st, MPI_INT, &cnt));
            CHECK_EQ(cnt, BIGN);
            memset(buf, 0, BIGN * sizeof(int));
            CHECK_MPI(MPI_Mrecv(buf, cnt, MPI_INT, &m, &st));
            for (int i = 0; i < BIGN; i++) CHECK_EQ(buf[i], i ^ 0x5555);
        }
        free(buf);
    }
    mt_pass("p2p_probe: Mprobe/Improbe + Mrecv/Imrecv");

    /* MPI_PROC_NULL everywhere completes at once with the empty status. */
    {
        int x = 5;
        MPI_Request rq;
        MPI_Message m = MPI_MESSAGE_NULL;
        CHECK_MPI(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Ssend(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
        x = 5;
        CHECK_MPI(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        check_proc_null_status(&st, "Recv from PROC_NULL");
        CHECK(x == 5, "Recv from PROC_NULL changed the buffer");
        CHECK_MPI(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
        CHECK_MPI(MPI_Wait(&rq, &st));
        check_proc_null_status_x(&st, "Irecv from PROC_NULL", 1);
        CHECK_MPI(MPI_Isend(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
        flag = 0;
        CHECK_MPI(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        CHECK(flag, "Isend to PROC_NULL must complete at the first Test");
        CHECK_MPI(MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        check_proc_null_status(&st, "Probe of PROC_NULL");
        flag = 0;
        CHECK_MPI(MPI_Iprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag, "Iprobe of PROC_NULL must return true");
        check_proc_null_status(&st, "Iprobe of PROC_NULL");
        CHECK_MPI(MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &m, &st));
        CHECK(m == MPI_MESSAGE_NO_PROC, "Mprobe of PROC_NULL must give MPI_MESSAGE_NO_PROC");
        check_proc_null_status(&st, "Mprobe of PROC_NULL");
        CHECK_MPI(MPI_Mrecv(&x, 1, MPI_INT, &m, &st));
        CHECK(m == MPI_MESSAGE_NULL, "Mrecv of MPI_MESSAGE_NO_PROC sets MPI_MESSAGE_NULL");
        check_proc_null_status(&st, "Mrecv of MPI_MESSAGE_NO_PROC");
        flag = 0;
        m = MPI_MESSAGE_NULL;
        CHECK_MPI(MPI_Improbe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &flag, &m, &st));
        CHECK(flag && m == MPI_MESSAGE_NO_PROC, "Improbe of PROC_NULL: flag %d", flag);
        CHECK_MPI(MPI_Imrecv(&x, 1, MPI_INT, &m, &rq));
        CHECK_MPI(MPI_Wait(&rq, &st));
        check_proc_null_status_x(&st, "Imrecv of MPI_MESSAGE_NO_PROC", 1);
        CHECK_MPI(
            MPI_Sendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        check_proc_null_status(&st, "Sendrecv with PROC_NULL");
    }
    mt_pass("p2p_probe: MPI_PROC_NULL sends, receives, probes");
    MPI_Finalize();
    return 0;
}
