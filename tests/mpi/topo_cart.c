/* Cartesian topologies: MPI_Dims_create against known factorizations, grid
 * construction (ranks beyond the grid get MPI_COMM_NULL), coordinates,
 * shifts at periodic and non-periodic borders, sub-grids, Cart_map, dup
 * keeping the topology, and the error classes. */
#include "mpitest.h"

static void dims_case(int nnodes, int ndims, const int *in, const int *want)
{
    int d[8];
    for (int i = 0; i < ndims; i++) d[i] = in ? in[i] : 0;
    CHECK_MPI(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++)
        CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes, ndims, i, d[i], want[i]);
}

static void test_dims_create(void)
{
    static const struct {
        int n, nd, want[4];
    } t[] = {
        {1, 1, {1}},          {1, 3, {1, 1, 1}},  {2, 2, {2, 1}},        {4, 2, {2, 2}},         {6, 2, {3, 2}},
        {7, 2, {7, 1}},       {8, 2, {4, 2}},     {8, 3, {2, 2, 2}},     {12, 2, {4, 3}},        {12, 3, {3, 2, 2}},
        {16, 2, {4, 4}},      {16, 3, {4, 2, 2}}, {16, 4, {2, 2, 2, 2}}, {24, 2, {6, 4}},        {24, 3, {4, 3, 2}},
        {30, 3, {5, 3, 2}},   {36, 2, {6, 6}},    {60, 2, {10, 6}},      {64, 3, {4, 4, 4}},     {100, 2, {10, 10}},
        {6, 4, {3, 2, 1, 1}}, {49, 3, {7, 7, 1}}, {1024, 2, {32, 32}},   {210, 4, {7, 5, 3, 2}},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) dims_case(t[i].n, t[i].nd, NULL, t[i].want);
    /* fixed entries are kept, the rest balanced among themselves */
    int in1[3] = {0, 3, 0}, w1[3] = {2, 3, 2};
    dims_case(12, 3, in1, w1);
    int in2[2] = {0, 5}, w2[2] = {4, 5};
    dims_case(20, 2, in2, w2);
    int in3[3] = {2, 3, 4}, w3[3] = {2, 3, 4};
    dims_case(24, 3, in3, w3);
    int in4[3] = {0, 0, 2}, w4[3] = {3, 2, 2};
    dims_case(12, 3, in4, w4);

    /* no communicator: MPI-4 reports on MPI_COMM_SELF, older libraries on WORLD */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad[2] = {5, 0};
    CHECK_ERRCLASS(MPI_Dims_create(12, 2, bad), MPI_ERR_DIMS);
    int bad2[2] = {-1, 0};
    CHECK_ERRCLASS(MPI_Dims_create(12, 2, bad2), MPI_ERR_DIMS);
    int bad3[2] = {4, 4};
    CHECK_ERRCLASS(MPI_Dims_create(12, 2, bad3), MPI_ERR_DIMS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    mt_pass("dims_create");
}

/* row-major coordinates, the last dimension fastest (MPI-4.1 section 8.5.1) */
static void coords_of(int r, int nd, const int *dims, int *c)
{
    for (int d = nd - 1; d >= 0; d--) {
        c[d] = r % dims[d];
        r /= dims[d];
    }
}

static int rank_of(int nd, const int *dims, const int *c)
{
    int r = 0;
    for (int d = 0; d < nd; d++) r = r * dims[d] + c[d];
    return r;
}

static void test_grid(void)
{
    int size = mt_size(MPI_COMM_WORLD), me = mt_rank(MPI_COMM_WORLD);
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    CHECK(cart != MPI_COMM_NULL, "every rank is in a full grid");
    int status;
    CHECK_MPI(MPI_Topo_test(cart, &status));
    CHECK_EQ(status, MPI_CART);
    CHECK_MPI(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK_EQ(status, MPI_UNDEFINED);
    int nd, gd[2], gp[2], gc[2], want[2];
    CHECK_MPI(MPI_Cartdim_get(cart, &nd));
    CHECK_EQ(nd, 2);
    int cr = mt_rank(cart);
    CHECK_EQ(cr, me); /* no reordering is done here, and none is needed for the checks below */
    CHECK_MPI(MPI_Cart_get(cart, 2, gd, gp, gc));
    CHECK_EQ(gd[0], dims[0]);
    CHECK_EQ(gd[1], dims[1]);
    CHECK_EQ(gp[0], 1);
    CHECK_EQ(gp[1], 0);
    coords_of(cr, 2, dims, want);
    CHECK_EQ(gc[0], want[0]);
    CHECK_EQ(gc[1], want[1]);
    for (int r = 0; r < size; r++) {
        int c[2], back;
        CHECK_MPI(MPI_Cart_coords(cart, r, 2, c));
        coords_of(r, 2, dims, want);
        CHECK(c[0] == want[0] && c[1] == want[1], "coords of %d", r);
        CHECK_MPI(MPI_Cart_rank(cart, c, &back));
        CHECK_EQ(back, r);
    }
    /* periodic dimension 0 wraps, in both directions and by several laps */
    int c[2] = {gc[0] - 3 * dims[0], gc[1]}, r;
    CHECK_MPI(MPI_Cart_rank(cart, c, &r));
    CHECK_EQ(r, cr);
    c[0] = gc[0] + dims[0] + 1;
    CHECK_MPI(MPI_Cart_rank(cart, c, &r));
    int w[2] = {(gc[0] + 1) % dims[0], gc[1]};
    CHECK_EQ(r, rank_of(2, dims, w));

    int src, dst;
    for (int disp = -2; disp <= 2; disp++) {
        CHECK_MPI(MPI_Cart_shift(cart, 0, disp, &src, &dst));
        int u[2] = {((gc[0] + disp) % dims[0] + dims[0]) % dims[0], gc[1]};
        int v[2] = {((gc[0] - disp) % dims[0] + dims[0]) % dims[0], gc[1]};
        CHECK_EQ(dst, rank_of(2, dims, u));
        CHECK_EQ(src, rank_of(2, dims, v));
        CHECK_MPI(MPI_Cart_shift(cart, 1, disp, &src, &dst));
        int up = gc[1] + disp, down = gc[1] - disp;
        int uu[2] = {gc[0], up}, dd[2] = {gc[0], down};
        CHECK_EQ(dst, up >= 0 && up < dims[1] ? rank_of(2, dims, uu) : MPI_PROC_NULL);
        CHECK_EQ(src, down >= 0 && down < dims[1] ? rank_of(2, dims, dd) : MPI_PROC_NULL);
    }

    /* a duplicate keeps the topology */
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(cart, &dup));
    CHECK_MPI(MPI_Topo_test(dup, &status));
    CHECK_EQ(status, MPI_CART);
    int dd2[2], dp2[2], dc2[2];
    CHECK_MPI(MPI_Cart_get(dup, 2, dd2, dp2, dc2));
    CHECK(dd2[0] == dims[0] && dd2[1] == dims[1] && dp2[0] == 1 && dp2[1] == 0 && dc2[0] == gc[0] && dc2[1] == gc[1],
          "dup's grid");
    CHECK_MPI(MPI_Comm_free(&dup));

    /* sub-grids: keeping dimension 1 gives the rows, dimension 0 the columns */
    for (int keep = 0; keep < 2; keep++) {
        int remain[2] = {keep == 0, keep == 1};
        MPI_Comm sub;
        CHECK_MPI(MPI_Cart_sub(cart, remain, &sub));
        CHECK_EQ(mt_size(sub), dims[keep]);
        CHECK_EQ(mt_rank(sub), gc[keep]);
        int snd, sdims[1], sper[1], scoords[1];
        CHECK_MPI(MPI_Cartdim_get(sub, &snd));
        CHECK_EQ(snd, 1);
        CHECK_MPI(MPI_Cart_get(sub, 1, sdims, sper, scoords));
        CHECK_EQ(sdims[0], dims[keep]);
        CHECK_EQ(sper[0], periods[keep]);
        CHECK_EQ(scoords[0], gc[keep]);
        /* every member of my row/column shares my other coordinate */
        int other = gc[1 - keep], mx = other, mn = other;
        MPI_Allreduce(&other, &mx, 1, MPI_INT, MPI_MAX, sub);
        MPI_Allreduce(&other, &mn, 1, MPI_INT, MPI_MIN, sub);
        CHECK(mx == other && mn == other, "sub-grid members share the dropped coordinate");
        CHECK_MPI(MPI_Comm_free(&sub));
    }
    /* keeping nothing: a zero-dimensional grid of one process */
    int none[2] = {0, 0};
    MPI_Comm pt;
    CHECK_MPI(MPI_Cart_sub(cart, none, &pt));
    /* MPICH gives it to one process only, the others MPI_COMM_NULL */
    if (pt != MPI_COMM_NULL) {
        CHECK_EQ(mt_size(pt), 1);
        CHECK_MPI(MPI_Cartdim_get(pt, &nd));
        CHECK_EQ(nd, 0);
        CHECK_MPI(MPI_Comm_free(&pt));
    }

    int nr;
    CHECK_MPI(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &nr));
    CHECK_EQ(nr, me);

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    CHECK_ERRCLASS(MPI_Cartdim_get(MPI_COMM_WORLD, &nd), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
#ifdef LEANMPI
    /* peers differ here: Open MPI does not check the rank */
    CHECK_ERRCLASS(MPI_Cart_coords(cart, size, 2, c), MPI_ERR_RANK);
#endif
    int badc[2] = {0, dims[1]};
    CHECK_ERRCLASS(MPI_Cart_rank(cart, badc, &r), MPI_ERR_ARG);
    int nneg;
    CHECK_ERRCLASS(MPI_Graph_neighbors_count(cart, 0, &nneg), MPI_ERR_TOPOLOGY);
    int big[2] = {size + 1, 1};
    MPI_Comm none_c = MPI_COMM_NULL;
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, &none_c) != MPI_SUCCESS, "grid larger than comm");
#ifdef LEANMPI
    /* peers differ here: MPICH accepts an empty dimension */
    int zero[2] = {0, 1};
    CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, periods, 0, &none_c), MPI_ERR_DIMS);
#endif
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK_MPI(MPI_Comm_free(&cart));
    mt_pass("grid");
}

static void test_partial_grid(void)
{
    int size = mt_size(MPI_COMM_WORLD), me = mt_rank(MPI_COMM_WORLD);
    /* a 1-D ring over all but the last process (one process: over all) */
    int n = size > 1 ? size - 1 : 1, periods = 1;
    MPI_Comm ring;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, &n, &periods, 1, &ring));
    if (me >= n) {
        CHECK(ring == MPI_COMM_NULL, "rank %d is beyond the grid", me);
    } else {
        CHECK(ring != MPI_COMM_NULL, "rank %d is in the grid", me);
        CHECK_EQ(mt_size(ring), n);
        int r = mt_rank(ring), src, dst;
        CHECK_MPI(MPI_Cart_shift(ring, 0, 1, &src, &dst));
        CHECK_EQ(dst, (r + 1) % n);
        CHECK_EQ(src, (r - 1 + n) % n);
        /* a message around the ring shows the communicator works */
        int tok = r, got = -1;
        CHECK_MPI(MPI_Sendrecv(&tok, 1, MPI_INT, dst, 5, &got, 1, MPI_INT, src, 5, ring, MPI_STATUS_IGNORE));
        CHECK_EQ(got, src);
        CHECK_MPI(MPI_Comm_free(&ring));
    }
    int nr;
    CHECK_MPI(MPI_Cart_map(MPI_COMM_WORLD, 1, &n, &periods, &nr));
    if (me < n) CHECK_EQ(nr, me);
#ifdef LEANMPI
    /* peers differ here: Open MPI gives a rank even beyond the grid */
    else CHECK_EQ(nr, MPI_UNDEFINED);
#endif
    mt_pass("partial grid");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_dims_create();
    test_grid();
    test_partial_grid();
    MPI_Finalize();
    return 0;
}
