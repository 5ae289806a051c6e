/* Collectives on an intercommunicator (even world ranks against odd ones)
 * in the forms beyond the basic blocking ones: nonblocking barrier and
 * bcast, the v forms (gatherv, scatterv, allgatherv, alltoallv, alltoallw),
 * reduce and allreduce with a non-commutative op (operands in remote rank
 * order), reduce_scatter_block, reduce_scatter, persistent allreduce, the
 * large-count forms, and scan's error (not defined on intercommunicators). */
#include "mpitest.h"

static int wrank, wsize, side, lrank, lsize, rsize;

static int side_size(int parity) { return parity ? wsize / 2 : (wsize + 1) / 2; }
/* A value only remote rank i of the other side knows how to make. */
static int remote_value(int i, int k) { return (2 * i + 1 - side) * 1000 + k; }
static int my_value(int k) { return wrank * 1000 + k; }

/* (a, b) op (c, d) = (a, d): associative, not commutative; over the inputs
 * of ranks 0..m-1 in order the result is (first of 0, last of m-1). */
static void first_last(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) b[2 * i] = a[2 * i];
}

static void test_barrier_bcast(MPI_Comm ic)
{
    MPI_Request r;
    CHECK_MPI(MPI_Ibarrier(ic, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    /* side 0's rank 0 broadcasts to side 1 */
    int v[3] = {-1, -1, -1};
    int root = side == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    if (root == MPI_ROOT)
        for (int k = 0; k < 3; k++) v[k] = my_value(k);
    CHECK_MPI(MPI_Ibcast(v, 3, MPI_INT, root, ic, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int k = 0; k < 3; k++) CHECK_EQ(v[k], side == 1 ? remote_value(0, k) : (lrank == 0 ? my_value(k) : -1));
}

/* Side 1's last rank gathers from side 0, rank i sending i + 1 values; then
 * scatters them back. */
static void test_gatherv_scatterv(MPI_Comm ic)
{
    int is_root_side = side == 1, root;
    if (is_root_side) root = lrank == lsize - 1 ? MPI_ROOT : MPI_PROC_NULL;
    else root = side_size(1) - 1;
    int total = rsize * (rsize + 1) / 2;
    int *counts = malloc(sizeof(int) * (size_t)rsize), *displs = malloc(sizeof(int) * (size_t)rsize);
    int *all = malloc(sizeof(int) * (size_t)(total + 1)), mine[64];
    /* blocks in reverse order of ranks in the root's buffer */
    for (int i = 0, at = total; i < rsize; i++) {
        counts[i] = i + 1;
        at -= counts[i];
        displs[i] = at;
    }
    for (int k = 0; k <= lrank; k++) mine[k] = my_value(k);
    MPI_Request r;
    CHECK_MPI(MPI_Igatherv(mine, lrank + 1, MPI_INT, all, counts, displs, MPI_INT, root, ic, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (root == MPI_ROOT)
        for (int i = 0; i < rsize; i++)
            for (int k = 0; k <= i; k++) CHECK_EQ(all[displs[i] + k], remote_value(i, k));
    /* back: the root adds 1 to everything */
    if (root == MPI_ROOT)
        for (int i = 0; i < total; i++) all[i] += 1;
    for (int k = 0; k <= lrank; k++) mine[k] = -1;
    CHECK_MPI(MPI_Scatterv(all, counts, displs, MPI_INT, mine, lrank + 1, MPI_INT, root, ic));
    if (!is_root_side)
        for (int k = 0; k <= lrank; k++) CHECK_EQ(mine[k], my_value(k) + 1);
    free(counts);
    free(displs);
    free(all);
}

static void test_allgatherv_alltoallv(MPI_Comm ic)
{
    int total = rsize * (rsize + 1) / 2;
    int *counts = malloc(sizeof(int) * (size_t)rsize), *displs = malloc(sizeof(int) * (size_t)rsize);
    int *all = malloc(sizeof(int) * (size_t)(total + 1)), mine[64];
    for (int i = 0, at = 0; i < rsize; i++) {
        counts[i] = i + 1;
        displs[i] = at;
        at += counts[i];
    }
    for (int k = 0; k <= lrank; k++) mine[k] = my_value(k);
    MPI_Request r;
    CHECK_MPI(MPI_Iallgatherv(mine, lrank + 1, MPI_INT, all, counts, displs, MPI_INT, ic, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < rsize; i++)
        for (int k = 0; k <= i; k++) CHECK_EQ(all[displs[i] + k], remote_value(i, k));

    /* alltoallv: to remote rank j, j + 1 values my_value(100 * j + k);
     * from remote rank i, lrank + 1 values */
    int ssum = rsize * (rsize + 1) / 2;
    int *sc = malloc(sizeof(int) * (size_t)rsize), *sd = malloc(sizeof(int) * (size_t)rsize);
    int *rc = malloc(sizeof(int) * (size_t)rsize), *rd = malloc(sizeof(int) * (size_t)rsize);
    int *sb = malloc(sizeof(int) * (size_t)(ssum + 1)), *rb = malloc(sizeof(int) * (size_t)(rsize * (lrank + 1) + 1));
    for (int j = 0, at = 0; j < rsize; j++) {
        sc[j] = j + 1;
        sd[j] = at;
        for (int k = 0; k <= j; k++) sb[at + k] = my_value(100 * j + k);
        at += sc[j];
        rc[j] = lrank + 1;
        rd[j] = (rsize - 1 - j) * (lrank + 1);
    }
    CHECK_MPI(MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic));
    for (int i = 0; i < rsize; i++)
        for (int k = 0; k <= lrank; k++) CHECK_EQ(rb[rd[i] + k], remote_value(i, 100 * lrank + k));

    /* alltoallw with byte displacements, one int to and from everyone */
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)rsize);
    for (int j = 0; j < rsize; j++) {
        sc[j] = rc[j] = 1;
        sd[j] = j * (int)sizeof(int);
        rd[j] = (rsize - 1 - j) * (int)sizeof(int);
        sb[j] = my_value(j);
        rb[j] = -1;
        types[j] = MPI_INT;
    }
    CHECK_MPI(MPI_Alltoallw(sb, sc, sd, types, rb, rc, rd, types, ic));
    for (int i = 0; i < rsize; i++) CHECK_EQ(rb[rsize - 1 - i], remote_value(i, lrank));
    free(types);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sb);
    free(rb);
    free(counts);
    free(displs);
    free(all);
}

static void test_reductions(MPI_Comm ic)
{
    MPI_Op op;
    CHECK_MPI(MPI_Op_create(first_last, 0, &op));
    int in[4] = {my_value(0), my_value(1), my_value(2), my_value(3)}, out[4] = {-1, -1, -1, -1};
    MPI_Request r;
    CHECK_MPI(MPI_Iallreduce(in, out, 2, MPI_2INT, op, ic, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int e = 0; e < 2; e++) {
        CHECK_EQ(out[2 * e], remote_value(0, 2 * e));
        CHECK_EQ(out[2 * e + 1], remote_value(rsize - 1, 2 * e + 1));
    }
    /* reduce to side 0's rank 0, sums */
    long s = wrank + 1, sum = -1, want = 0;
    int root = side == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    for (int i = 0; i < rsize; i++) want += 2 * i + 1 - side + 1;
    CHECK_MPI(MPI_Reduce(&s, &sum, 1, MPI_LONG, MPI_SUM, root, ic));
    CHECK_EQ(sum, root == MPI_ROOT ? want : -1);

    /* persistent allreduce, started twice */
    MPI_Request p;
    long x = 0, y = -1;
    CHECK_MPI(MPI_Allreduce_init(&x, &y, 1, MPI_LONG, MPI_MAX, ic, MPI_INFO_NULL, &p));
    for (int round = 1; round <= 2; round++) {
        x = wrank * round;
        CHECK_MPI(MPI_Start(&p));
        CHECK_MPI(MPI_Wait(&p, MPI_STATUS_IGNORE));
        CHECK_EQ(y, (long)(2 * (rsize - 1) + 1 - side) * round);
    }
    CHECK_MPI(MPI_Request_free(&p));

    /* reduce_scatter_block: both sides reduce inputs of the same length,
     * 2 * lsize * rsize, each local rank getting its equal part */
    int total = 2 * lsize * rsize; /* the same on both sides */
    int per = total / lsize;
    int *vin = malloc(sizeof(int) * (size_t)total), *vout = malloc(sizeof(int) * (size_t)(per + 1));
    for (int k = 0; k < total; k++) vin[k] = my_value(k);
    CHECK_MPI(MPI_Reduce_scatter_block(vin, vout, per, MPI_INT, MPI_SUM, ic));
    for (int k = 0; k < per; k++) {
        int w = 0;
        for (int i = 0; i < rsize; i++) w += remote_value(i, lrank * per + k);
        CHECK_EQ(vout[k], w);
    }
    /* reduce_scatter: the same total, split unevenly (rank 0 takes one
     * element from the last rank) */
    int *counts = malloc(sizeof(int) * (size_t)lsize);
    for (int i = 0; i < lsize; i++) counts[i] = 2 * rsize;
    if (lsize > 1) {
        counts[0] += 1;
        counts[lsize - 1] -= 1;
    }
    int off = 0;
    for (int i = 0; i < lrank; i++) off += counts[i];
    for (int k = 0; k <= per; k++) vout[k] = -1;
    CHECK_MPI(MPI_Reduce_scatter(vin, vout, counts, MPI_INT, MPI_SUM, ic));
    for (int k = 0; k < counts[lrank]; k++) {
        int w = 0;
        for (int i = 0; i < rsize; i++) w += remote_value(i, off + k);
        CHECK_EQ(vout[k], w);
    }
    free(counts);
    free(vin);
    free(vout);
    CHECK_MPI(MPI_Op_free(&op));
}

static void test_large_count_and_errors(MPI_Comm ic)
{
    MPI_Count counts[64];
    MPI_Aint displs[64];
    int got[64], mine = my_value(7);
    for (int i = 0; i < rsize; i++) {
        counts[i] = 1;
        displs[i] = rsize - 1 - i;
    }
    CHECK_MPI(MPI_Allgatherv_c(&mine, 1, MPI_INT, got, counts, displs, MPI_INT, ic));
    for (int i = 0; i < rsize; i++) CHECK_EQ(got[rsize - 1 - i], remote_value(i, 7));

    CHECK_MPI(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    int a = 1, b = 0, cls;
    int rc = MPI_Scan(&a, &b, 1, MPI_INT, MPI_SUM, ic);
    CHECK(rc != MPI_SUCCESS, "MPI_Scan on an intercommunicator succeeded");
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_COMM);
    rc = MPI_Allreduce(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM, ic);
    CHECK(rc != MPI_SUCCESS, "MPI_IN_PLACE on an intercommunicator was accepted");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (mt_skip_unless(2, "intercommunicator collectives") || wsize > 128) {
        MPI_Finalize();
        return 0;
    }
    side = wrank % 2;
    lrank = wrank / 2;
    lsize = side_size(side);
    rsize = side_size(1 - side);
    MPI_Comm local, ic;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, side, wrank, &local));
    CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - side, 5, &ic));
    test_barrier_bcast(ic);
    mt_pass("ibarrier, ibcast");
    test_gatherv_scatterv(ic);
    mt_pass("igatherv, scatterv");
    test_allgatherv_alltoallv(ic);
    mt_pass("iallgatherv, alltoallv, alltoallw");
    test_reductions(ic);
    mt_pass("iallreduce (non-commutative), reduce, allreduce_init, reduce_scatter(_block)");
    test_large_count_and_errors(ic);
    mt_pass("allgatherv_c, errors");
    CHECK_MPI(MPI_Comm_free(&ic));
    CHECK_MPI(MPI_Comm_free(&local));
    MPI_Finalize();
    return 0;
}
