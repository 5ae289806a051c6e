/* Completion calls: Wait/Test in their single, any, all and some forms on
 * arrays mixing MPI_REQUEST_NULL with active requests, all-null arrays,
 * statuses, handles set to MPI_REQUEST_NULL on completion; persistent
 * requests (inactive after completion, restartable, empty status when
 * waited on inactive, Request_free active or not); Request_get_status (does
 * not free); Cancel of posted receives; small sends (which may complete at
 * once and share one handle) completed by each call.  Each part runs on COMM_SELF (the
 * peer is oneself) and between the ranks of pairs (2k, 2k+1), on a
 * communicator of the pair so that wildcards see the peer only.
 *
 * The MPI_ERROR field of an empty status is not checked: the standard says
 * MPI_SUCCESS, but both MPICH and Open MPI leave it as it was for the
 * single-completion calls. */
#include "mpitest.h"

/* MPICH 4.0 leaves the status of MPI_Testany untouched when no request is
 * active (the standard says empty status); that one check is skipped there. */
#ifdef MPICH_VERSION
#define PEER_TESTANY_EMPTY_QUIRK 1
#else
#define PEER_TESTANY_EMPTY_QUIRK 0
#endif

#define NSLOT 7
#define BIGN 20000 /* ints: 80 KB, rendezvous */

static int world_rank;

/* Slots of the request array: NULL entries between active ones.  tag 0
 * marks a slot left MPI_REQUEST_NULL. */
static const int slot_tag[NSLOT] = {0, 1, 0, 2, 3, 0, 4};
static const int slot_n[NSLOT] = {0, 100, 0, 0, BIGN, 0, 1};
#define NACTIVE 4

static int value(int tag, int src_world, int round, int i) { return tag * 1000003 + src_world * 7919 + round * 31 + i; }

static void fill(int *b, int n, int tag, int src_world, int round)
{
    for (int i = 0; i < n; i++) b[i] = value(tag, src_world, round, i);
}

typedef struct {
    MPI_Comm comm;
    int peer;       /* comm rank that sends to me (may be me) */
    int peer_world; /* its world rank: seeds the data */
    int me_world;
} pairing;

static int rbuf[NSLOT][BIGN + 1], sbuf[NSLOT][BIGN + 1];

static void check_empty(const MPI_Status *st, const char *what)
{
    int cnt = -1, canc = -1;
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG, "%s: empty status has source %d tag %d", what,
          st->MPI_SOURCE, st->MPI_TAG);
    CHECK_MPI(MPI_Get_count(st, MPI_INT, &cnt));
    CHECK_MPI(MPI_Test_cancelled(st, &canc));
    CHECK(cnt == 0 && !canc, "%s: empty status has count %d cancelled %d", what, cnt, canc);
}

/* A received slot: status and data. */
static void check_slot(const pairing *p, int slot, const MPI_Status *st, int round, const char *what)
{
    int cnt = -1, canc = -1;
    CHECK(slot >= 0 && slot < NSLOT && slot_tag[slot], "%s: completed index %d is not an active slot", what, slot);
    CHECK(st->MPI_SOURCE == p->peer, "%s: slot %d source %d, expected %d", what, slot, st->MPI_SOURCE, p->peer);
    CHECK(st->MPI_TAG == slot_tag[slot], "%s: slot %d tag %d, expected %d", what, slot, st->MPI_TAG, slot_tag[slot]);
    CHECK_MPI(MPI_Get_count(st, MPI_INT, &cnt));
    CHECK(cnt == slot_n[slot], "%s: slot %d count %d, expected %d", what, slot, cnt, slot_n[slot]);
    CHECK_MPI(MPI_Test_cancelled(st, &canc));
    CHECK(!canc, "%s: slot %d reported cancelled", what, slot);
    for (int i = 0; i < cnt; i++)
        CHECK(rbuf[slot][i] == value(slot_tag[slot], p->peer_world, round, i), "%s: slot %d element %d is %d", what,
              slot, i, rbuf[slot][i]);
}

/* Receives for the active slots; wildcard source on some of them. */
static void post_recvs(const pairing *p, MPI_Request reqs[NSLOT])
{
    for (int s = 0; s < NSLOT; s++) {
        reqs[s] = MPI_REQUEST_NULL;
        if (!slot_tag[s]) continue;
        memset(rbuf[s], 0xff, sizeof rbuf[s]);
        int src = s == 3 ? MPI_ANY_SOURCE : p->peer;
        CHECK_MPI(MPI_Irecv(rbuf[s], slot_n[s] ? BIGN : 0, MPI_INT, src, slot_tag[s], p->comm, &reqs[s]));
    }
}

/* The peer's messages for the slots (in reverse slot order, so completion
 * order differs from the array order). */
static void send_all(const pairing *p, int round, MPI_Request sreq[NSLOT])
{
    int dst = p->peer; /* pairs are symmetric: I send to whoever sends to me */
    for (int s = NSLOT - 1; s >= 0; s--) {
        sreq[s] = MPI_REQUEST_NULL;
        if (!slot_tag[s]) continue;
        fill(sbuf[s], slot_n[s], slot_tag[s], p->me_world, round);
        CHECK_MPI(MPI_Isend(sbuf[s], slot_n[s], MPI_INT, dst, slot_tag[s], p->comm, &sreq[s]));
    }
}

static void all_null(MPI_Request reqs[NSLOT], const char *what)
{
    for (int s = 0; s < NSLOT; s++)
        CHECK(reqs[s] == MPI_REQUEST_NULL, "%s: slot %d not MPI_REQUEST_NULL after completion", what, s);
}

/* Nothing can have arrived yet: the peer sends only after the barrier. */
static void check_nothing_done(MPI_Request reqs[NSLOT], const char *what)
{
    int flag = -1, index = -2, outcount = -2, indices[NSLOT];
    MPI_Status sts[NSLOT];
    CHECK_MPI(MPI_Testany(NSLOT, reqs, &index, &flag, &sts[0]));
    CHECK(!flag && index == MPI_UNDEFINED, "%s: Testany before any send: flag %d index %d", what, flag, index);
    CHECK_MPI(MPI_Testsome(NSLOT, reqs, &outcount, indices, sts));
    CHECK_EQ(outcount, 0);
    CHECK_MPI(MPI_Testall(NSLOT, reqs, &flag, sts));
    CHECK(!flag, "%s: Testall before any send", what);
    CHECK_MPI(MPI_Test(&reqs[1], &flag, &sts[0]));
    CHECK(!flag && reqs[1] != MPI_REQUEST_NULL, "%s: Test before any send", what);
    for (int s = 0; s < NSLOT; s++)
        CHECK((reqs[s] == MPI_REQUEST_NULL) == !slot_tag[s], "%s: slot %d changed by an incomplete test", what, s);
}

enum { USE_WAITANY, USE_TESTANY, USE_WAITSOME, USE_TESTSOME, USE_WAITALL, USE_TESTALL, USE_WAIT, USE_TEST, NUSES };
static const char *use_name[] = {"Waitany", "Testany", "Waitsome", "Testsome", "Waitall", "Testall", "Wait", "Test"};

/* Complete the receive array with one family of calls, checking what each
 * returns; the loops end on the "nothing active left" answer. */
static void complete_array(const pairing *p, MPI_Request reqs[NSLOT], int use, int round, int persistent)
{
    const char *what = use_name[use];
    int seen[NSLOT] = {0}, nseen = 0;
    MPI_Status sts[NSLOT];
    double t0 = MPI_Wtime();
    switch (use) {
    case USE_WAITANY:
    case USE_TESTANY:
        for (;;) {
            int index = -2, flag = 1;
            MPI_Status st;
            if (use == USE_WAITANY) CHECK_MPI(MPI_Waitany(NSLOT, reqs, &index, &st));
            else CHECK_MPI(MPI_Testany(NSLOT, reqs, &index, &flag, &st));
            if (!flag) {
                CHECK(index == MPI_UNDEFINED, "Testany: flag false with index %d", index);
                CHECK(MPI_Wtime() - t0 < MT_POLL_LIMIT_S, "Testany never completed");
                continue;
            }
            if (index == MPI_UNDEFINED) {
                CHECK(nseen == NACTIVE, "%s: MPI_UNDEFINED after %d of %d completions", what, nseen, NACTIVE);
                if (!(use == USE_TESTANY && PEER_TESTANY_EMPTY_QUIRK)) check_empty(&st, what);
                break;
            }
            CHECK(index >= 0 && index < NSLOT && !seen[index], "%s: index %d returned twice or out of range", what,
                  index);
            seen[index] = 1;
            nseen++;
            CHECK((reqs[index] == MPI_REQUEST_NULL) == !persistent, "%s: handle of completed slot %d", what, index);
            check_slot(p, index, &st, round, what);
        }
        break;
    case USE_WAITSOME:
    case USE_TESTSOME:
        for (;;) {
            int outcount = -2, indices[NSLOT];
            for (int k = 0; k < NSLOT; k++) indices[k] = -5;
            if (use == USE_WAITSOME) CHECK_MPI(MPI_Waitsome(NSLOT, reqs, &outcount, indices, sts));
            else CHECK_MPI(MPI_Testsome(NSLOT, reqs, &outcount, indices, sts));
            if (outcount == MPI_UNDEFINED) {
                CHECK(nseen == NACTIVE, "%s: MPI_UNDEFINED after %d of %d completions", what, nseen, NACTIVE);
                break;
            }
            CHECK(outcount >= 0 && outcount <= NACTIVE - nseen, "%s: outcount %d", what, outcount);
            CHECK(use == USE_TESTSOME || outcount > 0, "Waitsome returned no completion");
            CHECK(MPI_Wtime() - t0 < MT_POLL_LIMIT_S, "Testsome never completed");
            for (int k = 0; k < outcount; k++) {
                int s = indices[k];
                CHECK(s >= 0 && s < NSLOT && !seen[s], "%s: index %d returned twice or out of range", what, s);
                seen[s] = 1;
                nseen++;
                CHECK((reqs[s] == MPI_REQUEST_NULL) == !persistent, "%s: handle of completed slot %d", what, s);
                check_slot(p, s, &sts[k], round, what);
            }
        }
        break;
    case USE_WAITALL:
    case USE_TESTALL: {
        int flag = 0;
        for (int s = 0; s < NSLOT; s++) sts[s].MPI_SOURCE = sts[s].MPI_TAG = 4321;
        if (use == USE_WAITALL) {
            CHECK_MPI(MPI_Waitall(NSLOT, reqs, sts));
        } else {
            while (!flag) {
                CHECK_MPI(MPI_Testall(NSLOT, reqs, &flag, sts));
                if (!flag)
                    for (int s = 0; s < NSLOT; s++)
                        CHECK((reqs[s] == MPI_REQUEST_NULL) == !slot_tag[s],
                              "Testall changed slot %d while returning false", s);
                CHECK(MPI_Wtime() - t0 < MT_POLL_LIMIT_S, "Testall never completed");
            }
        }
        for (int s = 0; s < NSLOT; s++) {
            if (slot_tag[s]) check_slot(p, s, &sts[s], round, what);
            else check_empty(&sts[s], what);
            CHECK((reqs[s] == MPI_REQUEST_NULL) == (!persistent || !slot_tag[s]), "%s: handle of slot %d", what, s);
        }
        nseen = NACTIVE;
        break;
    }
    case USE_WAIT:
    case USE_TEST:
        for (int s = NSLOT - 1; s >= 0; s--) {
            MPI_Status st;
            int flag = 0;
            if (use == USE_WAIT) {
                CHECK_MPI(MPI_Wait(&reqs[s], &st));
            } else {
                while (!flag) {
                    CHECK_MPI(MPI_Test(&reqs[s], &flag, &st));
                    CHECK(flag || reqs[s] != MPI_REQUEST_NULL, "Test freed an incomplete request");
                    CHECK(MPI_Wtime() - t0 < MT_POLL_LIMIT_S, "Test never completed");
                }
            }
            if (slot_tag[s]) {
                check_slot(p, s, &st, round, what);
                nseen++;
            } else {
                check_empty(&st, what);
            }
            CHECK((reqs[s] == MPI_REQUEST_NULL) == (!persistent || !slot_tag[s]), "%s: handle of slot %d", what, s);
        }
        break;
    }
    CHECK_EQ(nseen, NACTIVE);
    if (!persistent) all_null(reqs, what);
}

/* Null and inactive entries only: every call answers "nothing to do". */
static void check_all_empty(MPI_Request reqs[NSLOT], const char *what)
{
    int index = -2, flag = -1, outcount = -2, indices[NSLOT];
    MPI_Status st, sts[NSLOT];
    st.MPI_SOURCE = 99;
    CHECK_MPI(MPI_Waitany(NSLOT, reqs, &index, &st));
    CHECK(index == MPI_UNDEFINED, "%s: Waitany index %d", what, index);
    check_empty(&st, what);
    CHECK_MPI(MPI_Testany(NSLOT, reqs, &index, &flag, &st));
    CHECK(flag && index == MPI_UNDEFINED, "%s: Testany flag %d index %d", what, flag, index);
    CHECK_MPI(MPI_Waitsome(NSLOT, reqs, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "%s: Waitsome outcount %d", what, outcount);
    outcount = -2;
    CHECK_MPI(MPI_Testsome(NSLOT, reqs, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "%s: Testsome outcount %d", what, outcount);
    for (int s = 0; s < NSLOT; s++) sts[s].MPI_SOURCE = 99;
    CHECK_MPI(MPI_Waitall(NSLOT, reqs, sts));
    for (int s = 0; s < NSLOT; s++) check_empty(&sts[s], what);
    flag = 0;
    CHECK_MPI(MPI_Testall(NSLOT, reqs, &flag, sts));
    CHECK(flag, "%s: Testall on empty entries", what);
    for (int s = 0; s < NSLOT; s++) {
        MPI_Request keep = reqs[s];
        st.MPI_SOURCE = 99;
        CHECK_MPI(MPI_Wait(&reqs[s], &st));
        check_empty(&st, what);
        flag = 0;
        st.MPI_SOURCE = 99;
        CHECK_MPI(MPI_Test(&reqs[s], &flag, &st));
        CHECK(flag, "%s: Test on an empty entry", what);
        check_empty(&st, what);
        flag = 0;
        st.MPI_SOURCE = 99;
        CHECK_MPI(MPI_Request_get_status(reqs[s], &flag, &st));
        CHECK(flag, "%s: Request_get_status on an empty entry", what);
        check_empty(&st, what);
        CHECK(reqs[s] == keep, "%s: an empty entry changed", what);
    }
    /* Zero-length arrays. */
    CHECK_MPI(MPI_Waitany(0, reqs, &index, &st));
    CHECK(index == MPI_UNDEFINED, "%s: Waitany of 0 requests gives index %d", what, index);
    CHECK_MPI(MPI_Waitall(0, reqs, sts));
    CHECK_MPI(MPI_Waitsome(0, reqs, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "%s: Waitsome of 0 requests gives %d", what, outcount);
}

static void arrays_part(const pairing *p)
{
    MPI_Request none[NSLOT];
    for (int s = 0; s < NSLOT; s++) none[s] = MPI_REQUEST_NULL;
    check_all_empty(none, "all MPI_REQUEST_NULL");

    for (int use = 0; use < NUSES; use++) {
        MPI_Request reqs[NSLOT], sreq[NSLOT];
        post_recvs(p, reqs);
        check_nothing_done(reqs, use_name[use]);
        CHECK_MPI(MPI_Barrier(p->comm));
        send_all(p, use, sreq);
        complete_array(p, reqs, use, use, 0);
        /* Sends: Waitall sets them all to MPI_REQUEST_NULL. */
        CHECK_MPI(MPI_Waitall(NSLOT, sreq, MPI_STATUSES_IGNORE));
        all_null(sreq, "send Waitall");
        check_all_empty(reqs, "after completion");
    }
}

/* Persistent requests on the same slots, restarted every round and
 * completed by a different call each time. */
static void persistent_part(const pairing *p)
{
    MPI_Request rreq[NSLOT], sreq[NSLOT];
    for (int s = 0; s < NSLOT; s++) {
        rreq[s] = sreq[s] = MPI_REQUEST_NULL;
        if (!slot_tag[s]) continue;
        CHECK_MPI(MPI_Recv_init(rbuf[s], slot_n[s] ? BIGN : 0, MPI_INT, s == 3 ? MPI_ANY_SOURCE : p->peer, slot_tag[s],
                                p->comm, &rreq[s]));
        CHECK_MPI(MPI_Send_init(sbuf[s], slot_n[s], MPI_INT, p->peer, slot_tag[s], p->comm, &sreq[s]));
    }
    /* Never started: inactive. */
    check_all_empty(rreq, "persistent, never started");
    for (int round = 0; round < NUSES; round++) {
        for (int s = 0; s < NSLOT; s++) memset(rbuf[s], 0xff, sizeof rbuf[s]);
        if (round % 2) {
            /* Startall takes persistent requests only: no null entries. */
            MPI_Request compact[NACTIVE];
            int k = 0;
            for (int s = 0; s < NSLOT; s++)
                if (slot_tag[s]) compact[k++] = rreq[s];
            CHECK_MPI(MPI_Startall(NACTIVE, compact));
            k = 0;
            for (int s = 0; s < NSLOT; s++)
                if (slot_tag[s]) CHECK(rreq[s] == compact[k++], "Startall changed a handle");
        } else {
            for (int s = 0; s < NSLOT; s++)
                if (rreq[s] != MPI_REQUEST_NULL) CHECK_MPI(MPI_Start(&rreq[s]));
        }
        check_nothing_done(rreq, "persistent");
        CHECK_MPI(MPI_Barrier(p->comm));
        for (int s = 0; s < NSLOT; s++)
            if (slot_tag[s]) {
                fill(sbuf[s], slot_n[s], slot_tag[s], p->me_world, round);
                CHECK_MPI(MPI_Start(&sreq[s]));
            }
        complete_array(p, rreq, round, round, 1);
        CHECK_MPI(MPI_Waitall(NSLOT, sreq, MPI_STATUSES_IGNORE));
        for (int s = 0; s < NSLOT; s++)
            CHECK((sreq[s] != MPI_REQUEST_NULL) == !!slot_tag[s], "Waitall freed persistent send %d", s);
        /* Completed: inactive again, not freed. */
        check_all_empty(rreq, "persistent, completed");
        check_all_empty(sreq, "persistent sends, completed");
    }
    /* Request_free of inactive persistent requests. */
    for (int s = 0; s < NSLOT; s++)
        if (slot_tag[s]) {
            CHECK_MPI(MPI_Request_free(&rreq[s]));
            CHECK(rreq[s] == MPI_REQUEST_NULL, "Request_free left a handle");
            if (s != 1 && s != 4) {
                CHECK_MPI(MPI_Request_free(&sreq[s]));
                CHECK(sreq[s] == MPI_REQUEST_NULL, "Request_free left a handle");
            }
        }
    /* Request_free of active persistent sends (eager and rendezvous): the
     * messages are still delivered. */
    MPI_Request r2[2];
    for (int k = 0; k < 2; k++) {
        int s = k ? 4 : 1;
        memset(rbuf[s], 0xff, sizeof rbuf[s]);
        CHECK_MPI(MPI_Irecv(rbuf[s], BIGN, MPI_INT, p->peer, slot_tag[s], p->comm, &r2[k]));
    }
    CHECK_MPI(MPI_Barrier(p->comm));
    for (int k = 0; k < 2; k++) {
        int s = k ? 4 : 1;
        fill(sbuf[s], slot_n[s], slot_tag[s], p->me_world, 77);
        CHECK_MPI(MPI_Start(&sreq[s]));
        CHECK_MPI(MPI_Request_free(&sreq[s]));
        CHECK(sreq[s] == MPI_REQUEST_NULL, "Request_free of an active request left a handle");
    }
    for (int k = 0; k < 2; k++) {
        MPI_Status st;
        int s = k ? 4 : 1;
        CHECK_MPI(MPI_Wait(&r2[k], &st));
        check_slot(p, s, &st, 77, "freed active persistent send");
    }
    /* The send buffers stay untouched until the peer has everything. */
    CHECK_MPI(MPI_Barrier(p->comm));
}

/* Request_get_status reports completion without freeing; Wait then frees. */
static void get_status_part(const pairing *p)
{
    for (int s = 1; s < NSLOT; s += 3) { /* slots 1 (eager) and 4 (rendezvous) */
        MPI_Request r, sr;
        MPI_Status st, st2;
        int flag = -1;
        memset(rbuf[s], 0xff, sizeof rbuf[s]);
        CHECK_MPI(MPI_Irecv(rbuf[s], BIGN, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, p->comm, &r));
        CHECK_MPI(MPI_Request_get_status(r, &flag, &st));
        CHECK(!flag, "Request_get_status: done before the send");
        CHECK_MPI(MPI_Barrier(p->comm));
        fill(sbuf[s], slot_n[s], slot_tag[s], p->me_world, 5);
        CHECK_MPI(MPI_Isend(sbuf[s], slot_n[s], MPI_INT, p->peer, slot_tag[s], p->comm, &sr));
        double t0 = MPI_Wtime();
        for (flag = 0; !flag;) {
            CHECK_MPI(MPI_Request_get_status(r, &flag, &st));
            CHECK(r != MPI_REQUEST_NULL, "Request_get_status freed the request");
            CHECK(MPI_Wtime() - t0 < MT_POLL_LIMIT_S, "Request_get_status never reported completion");
        }
        check_slot(p, s, &st, 5, "Request_get_status");
        /* Asking again gives the same answer; the request is still there. */
        flag = 0;
        CHECK_MPI(MPI_Request_get_status(r, &flag, &st2));
        CHECK(flag, "second Request_get_status");
        check_slot(p, s, &st2, 5, "second Request_get_status");
        CHECK_MPI(MPI_Wait(&r, &st2));
        CHECK(r == MPI_REQUEST_NULL, "Wait after Request_get_status must free the request");
        check_slot(p, s, &st2, 5, "Wait after Request_get_status");
        CHECK_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    }
}

/* Cancel of a posted receive: completes as cancelled, and no later message
 * is taken by it. */
static void cancel_part(const pairing *p)
{
    enum { TAG_C = 50 };
    MPI_Request r;
    MPI_Status st;
    int flag = -1, x = -1;
    /* Nonpersistent receives, one named source and one wildcard, completed
     * by Wait and by Test. */
    for (int k = 0; k < 2; k++) {
        CHECK_MPI(MPI_Irecv(&x, 1, MPI_INT, k ? MPI_ANY_SOURCE : p->peer, k ? MPI_ANY_TAG : TAG_C, p->comm, &r));
        CHECK_MPI(MPI_Cancel(&r));
        CHECK(r != MPI_REQUEST_NULL, "Cancel must not free the request");
        if (k) {
            double t0 = MPI_Wtime();
            for (flag = 0; !flag;) {
                CHECK_MPI(MPI_Test(&r, &flag, &st));
                CHECK(MPI_Wtime() - t0 < MT_POLL_LIMIT_S, "a cancelled receive never completed");
            }
        } else {
            CHECK_MPI(MPI_Wait(&r, &st));
        }
        CHECK(r == MPI_REQUEST_NULL, "completion of a cancelled receive frees it");
        CHECK_MPI(MPI_Test_cancelled(&st, &flag));
        CHECK(flag, "Test_cancelled false for a cancelled posted receive");
    }
    /* A persistent receive: cancelled, then started again and matched. */
    CHECK_MPI(MPI_Recv_init(&x, 1, MPI_INT, p->peer, TAG_C, p->comm, &r));
    CHECK_MPI(MPI_Start(&r));
    CHECK_MPI(MPI_Cancel(&r));
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK(r != MPI_REQUEST_NULL, "Wait freed a persistent request");
    CHECK_MPI(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "Test_cancelled false for a cancelled persistent receive");
    CHECK_MPI(MPI_Start(&r));
    CHECK_MPI(MPI_Barrier(p->comm));
    int v = 4242 + p->me_world;
    CHECK_MPI(MPI_Send(&v, 1, MPI_INT, p->peer, TAG_C, p->comm));
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK_MPI(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag, "a matched receive reported cancelled");
    CHECK(x == 4242 + p->peer_world && st.MPI_SOURCE == p->peer && st.MPI_TAG == TAG_C,
          "restarted receive got %d from %d tag %d", x, st.MPI_SOURCE, st.MPI_TAG);
    CHECK_MPI(MPI_Request_free(&r));
    /* The cancelled wildcard receives took nothing: a second message is
     * there for a fresh receive. */
    MPI_Request sr;
    CHECK_MPI(MPI_Isend(&v, 1, MPI_INT, p->peer, TAG_C + 1, p->comm, &sr)); /* may be to oneself */
    x = -1;
    CHECK_MPI(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, p->comm, &st));
    CHECK(x == 4242 + p->peer_world && st.MPI_TAG == TAG_C + 1, "after cancels got %d tag %d", x, st.MPI_TAG);
    CHECK_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    /* Cancel of a receive that may already be matched: either it is
     * cancelled and the message is still there, or it received the data. */
    int y = -1;
    CHECK_MPI(MPI_Isend(&v, 1, MPI_INT, p->peer, TAG_C + 2, p->comm, &r));
    MPI_Request rr;
    CHECK_MPI(MPI_Irecv(&y, 1, MPI_INT, p->peer, TAG_C + 2, p->comm, &rr));
    CHECK_MPI(MPI_Cancel(&rr));
    CHECK_MPI(MPI_Wait(&rr, &st));
    CHECK_MPI(MPI_Test_cancelled(&st, &flag));
    if (flag) {
        CHECK(y == -1, "a cancelled receive wrote %d", y);
        CHECK_MPI(MPI_Recv(&y, 1, MPI_INT, p->peer, TAG_C + 2, p->comm, MPI_STATUS_IGNORE));
    }
    CHECK(y == 4242 + p->peer_world, "message around a cancel: got %d", y);
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Barrier(p->comm));
}

/* Small sends complete at once where the library can hand them over (it may
 * then give every such send the same handle): several in flight at a time,
 * each completed by a different call (Wait, Test, Waitany, Testsome,
 * Request_get_status then Waitall, Request_free), all set to
 * MPI_REQUEST_NULL, every message received whole and in order; Start on
 * one is refused, as on any request that is not persistent. */
#define NSEND 6
static void send_handles_part(const pairing *p)
{
    int out[NSEND], in[NSEND], flag = 0, idx = -1, n = 0, ids[NSEND];
    MPI_Request s[NSEND], r[NSEND];
    for (int i = 0; i < NSEND; i++) {
        in[i] = -1;
        CHECK_MPI(MPI_Irecv(&in[i], 1, MPI_INT, p->peer, 50 + i, p->comm, &r[i]));
    }
    for (int i = 0; i < NSEND; i++) {
        out[i] = value(50 + i, p->me_world, 0, i);
        CHECK_MPI(MPI_Isend(&out[i], 1, MPI_INT, p->peer, 50 + i, p->comm, &s[i]));
    }
    CHECK_MPI(MPI_Wait(&s[0], MPI_STATUS_IGNORE));
    CHECK(s[0] == MPI_REQUEST_NULL, "Wait left a send handle set");
    do CHECK_MPI(MPI_Test(&s[1], &flag, MPI_STATUS_IGNORE));
    while (!flag);
    CHECK(s[1] == MPI_REQUEST_NULL, "Test left a send handle set");
    CHECK_MPI(MPI_Waitany(1, &s[2], &idx, MPI_STATUS_IGNORE));
    CHECK(idx == 0 && s[2] == MPI_REQUEST_NULL, "Waitany: index %d", idx);
    do CHECK_MPI(MPI_Testsome(1, &s[3], &n, ids, MPI_STATUSES_IGNORE));
    while (n == 0);
    CHECK(n == 1 && s[3] == MPI_REQUEST_NULL, "Testsome: %d done", n);
    do CHECK_MPI(MPI_Request_get_status(s[4], &flag, MPI_STATUS_IGNORE));
    while (!flag);
    CHECK(s[4] != MPI_REQUEST_NULL, "Request_get_status freed a send handle");
    CHECK_MPI(MPI_Waitall(1, &s[4], MPI_STATUSES_IGNORE));
    CHECK(s[4] == MPI_REQUEST_NULL, "Waitall left a send handle set");
    CHECK_MPI(MPI_Request_free(&s[5]));
    CHECK(s[5] == MPI_REQUEST_NULL, "Request_free left a send handle set");
    CHECK_MPI(MPI_Waitall(NSEND, r, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NSEND; i++) CHECK(in[i] == value(50 + i, p->peer_world, 0, i), "message %d: got %d", i, in[i]);

    /* Start on a send request that is not persistent */
    MPI_Request x;
    CHECK_MPI(MPI_Irecv(&in[0], 1, MPI_INT, p->peer, 60, p->comm, &r[0]));
    CHECK_MPI(MPI_Isend(&out[0], 1, MPI_INT, p->peer, 60, p->comm, &x));
    /* the handler that reports it: the request's communicator's, or
     * MPI_COMM_SELF's (no object) */
    CHECK_MPI(MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int rc = MPI_Start(&x), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "MPI_Start on a send that is not persistent gave class %d", cls);
    CHECK_MPI(MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_ARE_FATAL));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    CHECK_MPI(MPI_Wait(&x, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    CHECK(in[0] == value(50, p->peer_world, 0, 0), "message after Start: got %d", in[0]);
}

static void run_all(const pairing *p, const char *where)
{
    char msg[160];
    arrays_part(p);
    snprintf(msg, sizeof msg, "p2p_wait %s: Wait/Test/any/all/some with null entries, all-null arrays, statuses",
             where);
    mt_pass(msg);
    persistent_part(p);
    snprintf(msg, sizeof msg, "p2p_wait %s: persistent Start/Startall, inactive after completion, Request_free", where);
    mt_pass(msg);
    get_status_part(p);
    snprintf(msg, sizeof msg, "p2p_wait %s: Request_get_status does not free", where);
    mt_pass(msg);
    cancel_part(p);
    snprintf(msg, sizeof msg, "p2p_wait %s: Cancel of posted receives, Test_cancelled", where);
    mt_pass(msg);
    send_handles_part(p);
    snprintf(msg, sizeof msg, "p2p_wait %s: small sends completed by every kind of call, Start refused", where);
    mt_pass(msg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    world_rank = mt_rank(MPI_COMM_WORLD);
    int size = mt_size(MPI_COMM_WORLD);

    pairing self = {MPI_COMM_SELF, 0, world_rank, world_rank};
    run_all(&self, "self");

    MPI_Comm pair;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, world_rank / 2, world_rank, &pair));
    if (mt_size(pair) == 2) {
        pairing p = {pair, 1 - mt_rank(pair), world_rank ^ 1, world_rank};
        run_all(&p, "pairs");
    } else if (size == 1) {
        printf("SKIP p2p_wait pairs: needs 2 processes\n");
    }
    CHECK_MPI(MPI_Comm_free(&pair));
    MPI_Finalize();
    return 0;
}
