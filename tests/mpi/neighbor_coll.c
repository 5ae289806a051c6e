/* Neighbourhood collectives on a periodic and a non-periodic grid, on a
 * graph and on a distributed graph, each run blocking, nonblocking and
 * persistent: every block's content checked, blocks of MPI_PROC_NULL
 * neighbours left untouched, a non-contiguous receive type, and the error
 * for a communicator without a topology. */
#include "colltest.h"

/* the form the tests below run in (blocking, nonblocking, persistent) */
static int form;
#define NB_CALL(Name, ...)                                                                \
    RUN_FORM(form, 1, MPI_Neighbor_##Name(__VA_ARGS__), MPI_Neighbor_##Name(__VA_ARGS__), \
             MPI_Ineighbor_##Name(__VA_ARGS__, &req_), MPI_Neighbor_##Name##_init(__VA_ARGS__, MPI_INFO_NULL, &req_))

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are sentinel addresses: read through
 * a volatile so that compilers do not warn about reading arrays at them. */
static int *sentinel(int *p)
{
    int *volatile v = p;
    return v;
}

#define MAXN 16

/* The neighbours in the standard's order: for each dimension the -1 then
 * the +1 one (MPI-4.1 section 8.6). */
static int cart_neighbors(MPI_Comm c, int *nb)
{
    int nd;
    MPI_Cartdim_get(c, &nd);
    for (int d = 0; d < nd; d++) MPI_Cart_shift(c, d, 1, &nb[2 * d], &nb[2 * d + 1]);
    return 2 * nd;
}

static void test_cart(int periodic)
{
    int size = mt_size(MPI_COMM_WORLD);
    int dims[2] = {0, 0}, periods[2] = {periodic, periodic};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm c;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
    int me = mt_rank(c), nb[4], n = cart_neighbors(c, nb);
    int sbuf[2 * MAXN], rbuf[2 * MAXN];

    /* allgather: block k is neighbour k's rank */
    for (int k = 0; k < 2 * MAXN; k++) rbuf[k] = -1;
    NB_CALL(allgather, &me, 1, MPI_INT, rbuf, 1, MPI_INT, c);
    for (int k = 0; k < n; k++) CHECK(rbuf[k] == (nb[k] == MPI_PROC_NULL ? -1 : nb[k]), "allgather block %d", k);
    CHECK_EQ(rbuf[n], -1);

    /* alltoall: what the -1 neighbour sends to its +1 side lands in my -1
     * block and the reverse, so block k holds nb[k]'s block k^1. This holds
     * too where both neighbours are one process (a periodic dimension of
     * size 1 or 2), as MPI-4 requires and Open MPI does; MPICH mixes such
     * blocks up, so the test fails there at every process count. */
    for (int k = 0; k < n; k++) sbuf[k] = 100 * me + k;
    for (int k = 0; k < 2 * MAXN; k++) rbuf[k] = -1;
    NB_CALL(alltoall, sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, c);
    for (int k = 0; k < n; k++)
        CHECK(rbuf[k] == (nb[k] == MPI_PROC_NULL ? -1 : 100 * nb[k] + (k ^ 1)), "alltoall block %d: %d", k, rbuf[k]);

    /* allgatherv: blocks placed in reverse order with gaps */
    int rc[4], rd[4];
    for (int k = 0; k < n; k++) {
        rc[k] = 1;
        rd[k] = 2 * (n - 1 - k);
    }
    for (int k = 0; k < 2 * MAXN; k++) rbuf[k] = -1;
    NB_CALL(allgatherv, &me, 1, MPI_INT, rbuf, rc, rd, MPI_INT, c);
    for (int k = 0; k < n; k++) {
        CHECK(rbuf[rd[k]] == (nb[k] == MPI_PROC_NULL ? -1 : nb[k]), "allgatherv block %d", k);
        CHECK_EQ(rbuf[rd[k] + 1], -1);
    }

    /* alltoallv: two ints a block, send blocks reversed, receive blocks in order */
    int sc[4], sd[4];
    for (int k = 0; k < n; k++) {
        sc[k] = rc[k] = 2;
        sd[k] = 2 * (n - 1 - k);
        rd[k] = 2 * k;
        sbuf[sd[k]] = 1000 * me + k;
        sbuf[sd[k] + 1] = -(1000 * me + k);
    }
    for (int k = 0; k < 2 * MAXN; k++) rbuf[k] = -1;
    NB_CALL(alltoallv, sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c);
    for (int k = 0; k < n; k++) {
        int want = 1000 * nb[k] + (k ^ 1);
        if (nb[k] == MPI_PROC_NULL) CHECK(rbuf[2 * k] == -1 && rbuf[2 * k + 1] == -1, "untouched block %d", k);
        else CHECK(rbuf[2 * k] == want && rbuf[2 * k + 1] == -want, "alltoallv block %d", k);
    }

    /* alltoallw: byte displacements, a type per block */
    MPI_Aint swd[4], rwd[4];
    MPI_Datatype st[4], rt[4];
    for (int k = 0; k < n; k++) {
        sc[k] = rc[k] = 1;
        swd[k] = (MPI_Aint)(sizeof(int) * k);
        rwd[k] = (MPI_Aint)(sizeof(int) * (n - 1 - k));
        st[k] = rt[k] = MPI_INT;
        sbuf[k] = 7 * me + k;
    }
    for (int k = 0; k < 2 * MAXN; k++) rbuf[k] = -1;
    NB_CALL(alltoallw, sbuf, sc, swd, st, rbuf, rc, rwd, rt, c);
    for (int k = 0; k < n; k++)
        CHECK(rbuf[n - 1 - k] == (nb[k] == MPI_PROC_NULL ? -1 : 7 * nb[k] + (k ^ 1)), "alltoallw block %d", k);

    /* a non-contiguous receive type: every other int, the gaps untouched */
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int two[2] = {me, -me};
    for (int k = 0; k < 2 * MAXN; k++) rbuf[k] = -7;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(vec, &lb, &ext);
    NB_CALL(allgather, two, 2, MPI_INT, rbuf, 1, vec, c);
    int stride = (int)(ext / (MPI_Aint)sizeof(int));
    for (int k = 0; k < n; k++) {
        int *b = rbuf + k * stride;
        if (nb[k] == MPI_PROC_NULL) CHECK(b[0] == -7 && b[2] == -7, "vector block %d untouched", k);
        else CHECK(b[0] == nb[k] && b[2] == -nb[k], "vector block %d: %d %d", k, b[0], b[2]);
        CHECK_EQ(b[1], -7);
    }
    MPI_Type_free(&vec);

#if MPI_VERSION >= 4
    /* the large-count form (MPI-4) */
    MPI_Count cc[4];
    MPI_Aint cd[4];
    for (int k = 0; k < n; k++) {
        cc[k] = 1;
        cd[k] = n - 1 - k;
    }
    for (int k = 0; k < 2 * MAXN; k++) rbuf[k] = -1;
    CHECK_MPI(MPI_Neighbor_allgatherv_c(&me, 1, MPI_INT, rbuf, cc, cd, MPI_INT, c));
    for (int k = 0; k < n; k++)
        CHECK(rbuf[n - 1 - k] == (nb[k] == MPI_PROC_NULL ? -1 : nb[k]), "allgatherv_c block %d", k);
#endif
    CHECK_MPI(MPI_Comm_free(&c));
    mt_pass(periodic ? "periodic grid" : "non-periodic grid");
}

static void test_graph(void)
{
    int size = mt_size(MPI_COMM_WORLD), me = mt_rank(MPI_COMM_WORLD);
    int *index = malloc(sizeof(int) * size), *edges = malloc(sizeof(int) * 2 * size);
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + size - 1) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_Comm g;
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    int r[2] = {-1, -1};
    NB_CALL(allgather, &me, 1, MPI_INT, r, 1, MPI_INT, g);
    CHECK_EQ(r[0], (me + size - 1) % size);
    CHECK_EQ(r[1], (me + 1) % size);
    CHECK_MPI(MPI_Comm_free(&g));
    free(index);
    free(edges);
    mt_pass("graph");
}

static void test_dist_graph(void)
{
    int size = mt_size(MPI_COMM_WORLD), me = mt_rank(MPI_COMM_WORLD);
    /* from i-1 and i-2, to i+1 and i+2 */
    int src[2] = {(me + size - 1) % size, (me + 2 * size - 2) % size}, dst[2] = {(me + 1) % size, (me + 2) % size};
    MPI_Comm d;
    int *unw = sentinel(MPI_UNWEIGHTED);
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, unw, 2, dst, unw, MPI_INFO_NULL, 0, &d));
    int r[4] = {-1, -1, -1, -1};
    NB_CALL(allgather, &me, 1, MPI_INT, r, 1, MPI_INT, d);
    CHECK_EQ(r[0], src[0]);
    CHECK_EQ(r[1], src[1]);
    /* block k goes to dst[k]: i-1 sends me its block 0, i-2 its block 1 */
    int s[2] = {100 * me, 100 * me + 1};
    NB_CALL(alltoall, s, 1, MPI_INT, r, 1, MPI_INT, d);
    CHECK_EQ(r[0], 100 * src[0]);
    CHECK_EQ(r[1], 100 * src[1] + 1);
    int sc[2] = {1, 1}, sd[2] = {1, 0}, rc[2] = {1, 1}, rd[2] = {3, 0};
    r[0] = r[1] = r[2] = r[3] = -1;
    NB_CALL(alltoallv, s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, d);
    CHECK_EQ(r[3], 100 * src[0] + 1);
    CHECK_EQ(r[0], 100 * src[1]);
    CHECK_EQ(r[1], -1);
    CHECK_EQ(r[2], -1);
    CHECK_MPI(MPI_Comm_free(&d));

    /* a process with no neighbours at all takes part too */
    int in = me % 2 == 1 ? 1 : 0, from = me - 1;
    int out = me % 2 == 0 && me + 1 < size ? 1 : 0, to2 = me + 1;
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, in, &from, unw, out, &to2, unw, MPI_INFO_NULL, 0, &d));
    int got = -1;
    NB_CALL(allgather, &me, 1, MPI_INT, &got, 1, MPI_INT, d);
    CHECK_EQ(got, in ? me - 1 : -1);
    CHECK_MPI(MPI_Comm_free(&d));
    mt_pass("dist graph");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (form = FORM_BLOCKING; form <= FORM_PERSISTENT; form++) {
        test_cart(1);
        test_cart(0);
        test_graph();
        test_dist_graph();
    }
#ifdef LEANMPI
    /* peers differ here: Open MPI reports MPI_ERR_INTERN */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 0, y;
    CHECK_ERRCLASS(MPI_Neighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
#endif
    mt_pass("errors");
    MPI_Finalize();
    return 0;
}
