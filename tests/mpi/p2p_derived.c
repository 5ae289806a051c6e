/* Point-to-point with derived datatypes: vector, indexed, struct and
 * subarray between two ranks and to self, at eager and rendezvous sizes,
 * with a contiguous sender and a derived receiver and the other way round,
 * truncation that never writes past the receive type, and MPI_Get_elements
 * of a partly received element. */
#include "mpitest.h"
#include <stddef.h>

#define BIG 100000 /* doubles: a rendezvous-sized message */

struct cdi {
    char c;
    double d;
    int i;
};

static MPI_Datatype struct_type(void)
{
    MPI_Datatype t;
    MPI_Aint disp[3] = {offsetof(struct cdi, c), offsetof(struct cdi, d), offsetof(struct cdi, i)};
    CHECK_MPI(MPI_Type_create_struct(3, (int[]){1, 1, 1}, disp, (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_INT}, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    return t;
}

/* vectors of n doubles with stride 2, in both directions and against a
 * contiguous peer; from `from` to `to` (may be the same rank) */
static void vector_exchange(int me, int from, int to, int n, int tag)
{
    MPI_Datatype vec;
    CHECK_MPI(MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    double *sb = malloc(sizeof(double) * 2 * n), *rb = malloc(sizeof(double) * 2 * n);
    for (int i = 0; i < 2 * n; i++) sb[i] = i;
    MPI_Request rq[3];
    int nr = 0;
    MPI_Status st;
    for (int mode = 0; mode < 3; mode++) {
        /* mode 0: vector -> vector, 1: vector -> contiguous, 2: contiguous -> vector */
        for (int i = 0; i < 2 * n; i++) rb[i] = -1;
        nr = 0;
        if (me == to) {
            if (mode == 1) CHECK_MPI(MPI_Irecv(rb, n, MPI_DOUBLE, from, tag + mode, MPI_COMM_WORLD, &rq[nr++]));
            else CHECK_MPI(MPI_Irecv(rb, 1, vec, from, tag + mode, MPI_COMM_WORLD, &rq[nr++]));
        }
        if (me == from) {
            if (mode == 2) {
                double *cb = malloc(sizeof(double) * n);
                for (int i = 0; i < n; i++) cb[i] = 2 * i;
                CHECK_MPI(MPI_Send(cb, n, MPI_DOUBLE, to, tag + mode, MPI_COMM_WORLD));
                free(cb);
            } else {
                CHECK_MPI(MPI_Send(sb, 1, vec, to, tag + mode, MPI_COMM_WORLD));
            }
        }
        if (me == to) {
            CHECK_MPI(MPI_Wait(&rq[0], &st));
            int cnt;
            CHECK_MPI(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
            CHECK_EQ(cnt, n);
            if (mode != 1) {
                CHECK_MPI(MPI_Get_count(&st, vec, &cnt));
                CHECK_EQ(cnt, 1);
                for (int i = 0; i < 2 * n; i++)
                    CHECK(rb[i] == (i % 2 ? -1 : i), "mode %d n %d: rb[%d] = %g", mode, n, i, rb[i]);
            } else {
                for (int i = 0; i < n; i++) CHECK(rb[i] == 2 * i, "mode %d n %d: rb[%d] = %g", mode, n, i, rb[i]);
            }
        }
    }
    free(sb);
    free(rb);
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int me = mt_rank(MPI_COMM_WORLD), np = mt_size(MPI_COMM_WORLD);
    int peer = np > 1 ? 1 : 0;

    /* to self, then between ranks 0 and 1: eager and rendezvous sizes */
    if (me == 0) {
        vector_exchange(me, 0, 0, 10, 100);
        vector_exchange(me, 0, 0, BIG, 200);
    }
    mt_pass("p2p_derived: vector to self");
    if (me <= peer) {
        vector_exchange(me, 0, peer, 10, 300);
        vector_exchange(me, 0, peer, BIG, 400);
        vector_exchange(me, peer, 0, BIG, 500);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mt_pass("p2p_derived: vector eager and rendezvous, derived/contiguous either side");

    /* indexed, struct, subarray: the same type on both sides */
    if (me <= peer) {
        MPI_Datatype idx, st = struct_type(), sub;
        CHECK_MPI(MPI_Type_indexed(3, (int[]){2, 1, 3}, (int[]){10, 0, 4}, MPI_INT, &idx));
        CHECK_MPI(MPI_Type_commit(&idx));
        int sizes[2] = {40, 50}, subs[2] = {30, 20}, starts[2] = {5, 7};
        CHECK_MPI(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub));
        CHECK_MPI(MPI_Type_commit(&sub));
        int ia[24], ib[24];
        struct cdi sa[500], sr[500];
        static int ga[40 * 50], gb[40 * 50];
        for (int i = 0; i < 24; i++) ia[i] = i, ib[i] = -1;
        for (int i = 0; i < 500; i++) sa[i] = (struct cdi){(char)i, i * 0.5, -i};
        memset(sr, 0x5a, sizeof sr);
        for (int i = 0; i < 40 * 50; i++) ga[i] = i, gb[i] = -1;
        if (me == 0) {
            MPI_Request rq[3];
            CHECK_MPI(MPI_Isend(ia, 2, idx, peer, 1, MPI_COMM_WORLD, &rq[0]));
            CHECK_MPI(MPI_Issend(sa, 500, st, peer, 2, MPI_COMM_WORLD, &rq[1]));
            CHECK_MPI(MPI_Isend(ga, 1, sub, peer, 3, MPI_COMM_WORLD, &rq[2]));
            if (peer == 0) {
                CHECK_MPI(MPI_Recv(ib, 2, idx, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK_MPI(MPI_Recv(sr, 500, st, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK_MPI(MPI_Recv(gb, 1, sub, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            }
            CHECK_MPI(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
        } else {
            CHECK_MPI(MPI_Recv(ib, 2, idx, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_Recv(sr, 500, st, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_Recv(gb, 1, sub, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        if (me == peer) {
            int in_idx[24] = {0};
            for (int e = 0; e < 2; e++) {
                int o = e * 12;
                in_idx[o + 10] = in_idx[o + 11] = in_idx[o + 0] = in_idx[o + 4] = in_idx[o + 5] = in_idx[o + 6] = 1;
            }
            for (int i = 0; i < 24; i++) CHECK_EQ(ib[i], in_idx[i] ? i : -1);
            for (int i = 0; i < 500; i++) {
                CHECK_EQ(sr[i].c, (char)i);
                CHECK(sr[i].d == i * 0.5, "struct %d", i);
                CHECK_EQ(sr[i].i, -i);
                CHECK_EQ(((unsigned char *)&sr[i])[1], 0x5a);
            }
            for (int r = 0; r < 40; r++)
                for (int c = 0; c < 50; c++) {
                    int in = r >= 5 && r < 35 && c >= 7 && c < 27;
                    CHECK_EQ(gb[r * 50 + c], in ? r * 50 + c : -1);
                }
        }
        MPI_Type_free(&idx);
        MPI_Type_free(&st);
        MPI_Type_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mt_pass("p2p_derived: indexed, struct, subarray");

    /* truncation: 20 strided ints into room for 10, eager and rendezvous;
     * nothing past the receive type's footprint is written */
    if (me <= peer) {
        for (int big = 0; big < 2; big++) {
            int n = big ? 20000 : 20;
            MPI_Datatype sv, rv;
            CHECK_MPI(MPI_Type_vector(n, 1, 2, MPI_INT, &sv));
            CHECK_MPI(MPI_Type_vector(n / 2, 1, 2, MPI_INT, &rv));
            CHECK_MPI(MPI_Type_commit(&sv));
            CHECK_MPI(MPI_Type_commit(&rv));
            int *s = malloc(sizeof(int) * 2 * n), *r = malloc(sizeof(int) * 2 * n);
            for (int i = 0; i < 2 * n; i++) s[i] = i, r[i] = -1;
            MPI_Request rq = MPI_REQUEST_NULL;
            if (me == 0) CHECK_MPI(MPI_Isend(s, 1, sv, peer, 7, MPI_COMM_WORLD, &rq));
            if (me == peer) {
                MPI_Status st;
                int rc = MPI_Recv(r, 1, rv, 0, 7, MPI_COMM_WORLD, &st);
                CHECK_ERRCLASS(rc, MPI_ERR_TRUNCATE);
                /* what lands inside the footprint is up to the implementation */
                for (int i = 0; i < 2 * n; i++)
                    CHECK(r[i] == -1 || (i < n - 1 && i % 2 == 0 && r[i] == i), "big %d: r[%d] = %d", big, i, r[i]);
            }
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            free(s);
            free(r);
            MPI_Type_free(&sv);
            MPI_Type_free(&rv);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mt_pass("p2p_derived: truncation");

    /* partial elements: 3 ints + 2 doubles... as (int, double) pairs */
    if (me <= peer) {
        MPI_Datatype id, did, c3;
        struct id {
            int i;
            double d;
        } rbuf[4];
        MPI_Aint disp[2] = {offsetof(struct id, i), offsetof(struct id, d)};
        CHECK_MPI(MPI_Type_create_struct(2, (int[]){1, 1}, disp, (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &id));
        CHECK_MPI(MPI_Type_commit(&id));
        /* the sender: int, double, int in a packed-looking struct */
        struct {
            int a;
            double b;
            int c;
        } sbuf = {1, 2.5, 3};
        MPI_Aint sd[3] = {0, offsetof(__typeof__(sbuf), b), offsetof(__typeof__(sbuf), c)};
        CHECK_MPI(
            MPI_Type_create_struct(3, (int[]){1, 1, 1}, sd, (MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_INT}, &did));
        CHECK_MPI(MPI_Type_commit(&did));
        CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &c3));
        CHECK_MPI(MPI_Type_commit(&c3));
        int seven[7] = {0, 1, 2, 3, 4, 5, 6}, r7[9];
        MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        if (me == 0) {
            CHECK_MPI(MPI_Isend(&sbuf, 1, did, peer, 11, MPI_COMM_WORLD, &rq[0]));
            CHECK_MPI(MPI_Isend(seven, 7, MPI_INT, peer, 12, MPI_COMM_WORLD, &rq[1]));
        }
        if (me == peer) {
            MPI_Status st;
            int n;
            CHECK_MPI(MPI_Recv(rbuf, 4, id, 0, 11, MPI_COMM_WORLD, &st));
            CHECK_MPI(MPI_Get_count(&st, id, &n));
            CHECK_EQ(n, MPI_UNDEFINED);
            CHECK_MPI(MPI_Get_elements(&st, id, &n));
            CHECK_EQ(n, 3);
            CHECK(rbuf[0].i == 1 && rbuf[0].d == 2.5 && rbuf[1].i == 3, "partial struct values");
            /* Status_set_elements counts basic elements of the same type
             * (MPICH counts whole elements of a derived type instead) */
#if !defined(MPICH)
            MPI_Status s2 = st;
            CHECK_MPI(MPI_Status_set_elements(&s2, id, 4));
            CHECK_MPI(MPI_Get_count(&s2, id, &n));
            CHECK_EQ(n, 2);
            CHECK_MPI(MPI_Status_set_elements(&s2, id, 3));
            CHECK_MPI(MPI_Get_elements(&s2, id, &n));
            CHECK_EQ(n, 3);
            CHECK_MPI(MPI_Get_count(&s2, id, &n));
            CHECK_EQ(n, MPI_UNDEFINED);
#endif
            CHECK_MPI(MPI_Recv(r7, 3, c3, 0, 12, MPI_COMM_WORLD, &st));
            CHECK_MPI(MPI_Get_count(&st, c3, &n));
            CHECK_EQ(n, MPI_UNDEFINED);
            CHECK_MPI(MPI_Get_elements(&st, c3, &n));
            CHECK_EQ(n, 7);
#if MPI_VERSION >= 3
            MPI_Count nc;
            CHECK_MPI(MPI_Get_elements_x(&st, c3, &nc));
            CHECK_EQ(nc, 7);
#endif
        }
        CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        MPI_Type_free(&id);
        MPI_Type_free(&did);
        MPI_Type_free(&c3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mt_pass("p2p_derived: Get_elements of partial elements");

    /* a type freed while its send is in flight; bsend, sendrecv_replace, probe */
    if (me <= peer) {
        MPI_Datatype vec;
        CHECK_MPI(MPI_Type_vector(5000, 1, 3, MPI_INT, &vec));
        CHECK_MPI(MPI_Type_commit(&vec));
        int *s = malloc(sizeof(int) * 15000), *r = malloc(sizeof(int) * 15000);
        for (int i = 0; i < 15000; i++) s[i] = i, r[i] = -1;
        if (me == 0) {
            MPI_Request rq;
            CHECK_MPI(MPI_Isend(s, 1, vec, peer, 21, MPI_COMM_WORLD, &rq));
            MPI_Datatype keep = vec;
            CHECK_MPI(MPI_Type_free(&keep));
            if (peer == 0) CHECK_MPI(MPI_Recv(r, 5000, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            MPI_Status st;
            int n;
            CHECK_MPI(MPI_Probe(0, 21, MPI_COMM_WORLD, &st));
            CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
            CHECK_EQ(n, 5000);
            CHECK_MPI(MPI_Recv(r, 5000, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_Type_free(&vec);
        }
        if (me == peer)
            for (int i = 0; i < 5000; i++) CHECK_EQ(r[i], 3 * i);
        free(s);
        free(r);

        /* buffered, 50 strided ints */
        MPI_Datatype v2;
        CHECK_MPI(MPI_Type_vector(50, 1, 2, MPI_INT, &v2));
        CHECK_MPI(MPI_Type_commit(&v2));
        int bs[100], br[50], psize;
        for (int i = 0; i < 100; i++) bs[i] = i;
        CHECK_MPI(MPI_Pack_size(1, v2, MPI_COMM_WORLD, &psize));
        int bsize = psize + MPI_BSEND_OVERHEAD;
        void *bbuf = malloc(bsize);
        CHECK_MPI(MPI_Buffer_attach(bbuf, bsize));
        if (me == 0) {
            CHECK_MPI(MPI_Bsend(bs, 1, v2, peer, 22, MPI_COMM_WORLD));
            for (int i = 0; i < 100; i++) bs[i] = -5; /* the copy was taken */
        }
        if (me == peer) {
            CHECK_MPI(MPI_Recv(br, 50, MPI_INT, 0, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < 50; i++) CHECK_EQ(br[i], 2 * i);
        }
        int dsize;
        CHECK_MPI(MPI_Buffer_detach(&bbuf, &dsize));
        free(bbuf);

        /* sendrecv_replace of a vector with itself or the peer */
        int rep[100];
        for (int i = 0; i < 100; i++) rep[i] = me * 1000 + i;
        int other = me == 0 ? peer : 0;
        CHECK_MPI(MPI_Sendrecv_replace(rep, 1, v2, other, 23, other, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 100; i++) CHECK_EQ(rep[i], i % 2 ? me * 1000 + i : other * 1000 + i);
        MPI_Type_free(&v2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mt_pass("p2p_derived: freed type in flight, bsend, sendrecv_replace, probe");

    /* matched probe, received into a vector */
    if (me <= peer) {
        MPI_Datatype v;
        CHECK_MPI(MPI_Type_vector(10, 1, 2, MPI_INT, &v));
        CHECK_MPI(MPI_Type_commit(&v));
        int s[10], r[20];
        for (int i = 0; i < 10; i++) s[i] = 40 + i;
        for (int i = 0; i < 20; i++) r[i] = -1;
        MPI_Request rq = MPI_REQUEST_NULL;
        if (me == 0) CHECK_MPI(MPI_Isend(s, 10, MPI_INT, peer, 31, MPI_COMM_WORLD, &rq));
        if (me == peer) {
            MPI_Message msg;
            MPI_Status st;
            int n;
            CHECK_MPI(MPI_Mprobe(0, 31, MPI_COMM_WORLD, &msg, &st));
            CHECK_MPI(MPI_Mrecv(r, 1, v, &msg, &st));
            CHECK_MPI(MPI_Get_count(&st, v, &n));
            CHECK_EQ(n, 1);
            for (int i = 0; i < 20; i++) CHECK_EQ(r[i], i % 2 ? -1 : 40 + i / 2);
        }
        CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_Type_free(&v);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mt_pass("p2p_derived: mprobe/mrecv into a vector");

    MPI_Finalize();
    return 0;
}
