/* LMTEST-LEANMPI-ONLY */
/* Topology and neighbourhood-collective misuse under MPI_ERRORS_RETURN:
 * constructors with invalid dims, ranks, degrees or weights; queries with
 * out-of-range arguments or on a communicator of the wrong topology kind;
 * neighbourhood collectives without a topology; a topology communicator used
 * after MPI_Comm_free; arguments that differ between processes. Every call must return the expected class, create
 * nothing, and leave the communicators working (peers differ on several of
 * these classes, hence LeanMPI only). All ranks pass the same bad arguments,
 * so a collective constructor fails everywhere before it communicates. */
#include "mpitest.h"

static int rank, size;
static int *unw; /* MPI_UNWEIGHTED read through a volatile: compilers warn about reading arrays at it */

/* Whatever failed, world still carries a message around the ring and a
 * collective: nothing was left half-started. */
static void still_works(MPI_Comm comm, int line)
{
    int n = mt_size(comm), me = mt_rank(comm), x = me, y = -1, sum = -1;
    CHECK_MPI(
        MPI_Sendrecv(&x, 1, MPI_INT, (me + 1) % n, 9, &y, 1, MPI_INT, (me + n - 1) % n, 9, comm, MPI_STATUS_IGNORE));
    CHECK(y == (me + n - 1) % n, "line %d: ring exchange got %d", line, y);
    CHECK_MPI(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == n * (n - 1) / 2, "line %d: allreduce got %d", line, sum);
}

/* A constructor that must fail leaves its output untouched or null. */
#define CHECK_NO_COMM(c) CHECK((c) == MPI_COMM_NULL, "a failed constructor returned a communicator")

static void cart_constructors(void)
{
    int dims[3] = {size, 1, 1}, periods[3] = {0, 0, 0};
    MPI_Comm c = MPI_COMM_NULL;
    /* more grid points than processes */
    int big[2] = {size + 1, 1};
    CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, &c), MPI_ERR_ARG);
    int big2[3] = {size, 2, 1};
    CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, 3, big2, periods, 0, &c), MPI_ERR_ARG);
    /* negative and zero dims, negative ndims */
    int neg[2] = {-1, size};
    CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, neg, periods, 0, &c), MPI_ERR_DIMS);
    int zero[2] = {size, 0};
    CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, periods, 0, &c), MPI_ERR_DIMS);
    CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &c), MPI_ERR_DIMS);
    /* missing arrays */
    CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, NULL, periods, 0, &c), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, NULL, 0, &c), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, NULL), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_NULL, 1, dims, periods, 0, &c), MPI_ERR_COMM);
    CHECK_NO_COMM(c);
    int nr;
    CHECK_ERRCLASS(MPI_Cart_map(MPI_COMM_WORLD, 2, big, periods, &nr), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Cart_map(MPI_COMM_WORLD, 2, neg, periods, &nr), MPI_ERR_DIMS);
    CHECK_ERRCLASS(MPI_Cart_map(MPI_COMM_WORLD, -2, dims, periods, &nr), MPI_ERR_DIMS);
    /* MPI_Dims_create: negative nnodes or ndims, dims that cannot divide */
    int d2[2] = {0, 0};
    CHECK_ERRCLASS(MPI_Dims_create(-4, 2, d2), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Dims_create(4, -1, d2), MPI_ERR_DIMS);
    int d3[2] = {3, 0};
    CHECK_ERRCLASS(MPI_Dims_create(4, 2, d3), MPI_ERR_DIMS);
    still_works(MPI_COMM_WORLD, __LINE__);
    mt_pass("errors_topo: Cartesian constructors with invalid dims, ndims, arrays, grid size");
}

/* Arguments that are valid on each process but differ between them. */
static void mismatched_arguments(void)
{
    if (size < 2) return;
    MPI_Comm c = MPI_COMM_NULL;
    int dims[2] = {size, 1}, periods[2] = {0, rank == 0};
    CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c), MPI_ERR_NOT_SAME);
    int dims2[2] = {rank == 0 ? 1 : size, rank == 0 ? size : 1}, flat[2] = {0, 0};
    CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, flat, 0, &c), MPI_ERR_NOT_SAME);
    int index[64], edges[64];
    for (int i = 0; i < size; i++) {
        index[i] = i + 1;
        edges[i] = (i + (rank == 0 ? 1 : size - 1)) % size; /* rank 0 a ring one way, the others the other */
    }
    if (size == 2) edges[0] = rank; /* both rings are the same with two nodes: rank 0 differs in its self loop */
    CHECK_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &c), MPI_ERR_NOT_SAME);
    CHECK_NO_COMM(c);
    MPI_Comm cart, sub = MPI_COMM_NULL;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, flat, 0, &cart));
    CHECK_MPI(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    int remain[2] = {rank == 0, rank != 0};
    CHECK_ERRCLASS(MPI_Cart_sub(cart, remain, &sub), MPI_ERR_NOT_SAME);
    CHECK_NO_COMM(sub);
    still_works(cart, __LINE__);
    CHECK_MPI(MPI_Comm_free(&cart));
    still_works(MPI_COMM_WORLD, __LINE__);
    mt_pass("errors_topo: Cartesian and graph arguments that differ between processes");
}

static void cart_queries(void)
{
    int dims[2] = {size, 1}, periods[2] = {0, 1};
    MPI_Comm cart;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    CHECK_MPI(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    int r, coords[2], src, dst, nd;
    /* coordinates outside a non-periodic dimension; wrapped in a periodic one */
    int out[2] = {size, 0};
    CHECK_ERRCLASS(MPI_Cart_rank(cart, out, &r), MPI_ERR_ARG);
    int negc[2] = {-1, 0};
    CHECK_ERRCLASS(MPI_Cart_rank(cart, negc, &r), MPI_ERR_ARG);
    int wrapped[2] = {0, 5};
    CHECK_MPI(MPI_Cart_rank(cart, wrapped, &r));
    CHECK_EQ(r, 0);
    CHECK_ERRCLASS(MPI_Cart_rank(cart, NULL, &r), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Cart_rank(cart, out, NULL), MPI_ERR_ARG);
    /* ranks outside the communicator, short output arrays */
    CHECK_ERRCLASS(MPI_Cart_coords(cart, size, 2, coords), MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Cart_coords(cart, -1, 2, coords), MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Cart_coords(cart, 0, 1, coords), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Cart_get(cart, 1, dims, periods, coords), MPI_ERR_ARG);
    /* a direction that is not a dimension */
    CHECK_ERRCLASS(MPI_Cart_shift(cart, 2, 1, &src, &dst), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Cart_shift(cart, -1, 1, &src, &dst), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Cart_shift(cart, 0, 1, NULL, &dst), MPI_ERR_ARG);
    /* Cart_sub without remain_dims */
    MPI_Comm sub = MPI_COMM_NULL;
    CHECK_ERRCLASS(MPI_Cart_sub(cart, NULL, &sub), MPI_ERR_ARG);
    CHECK_NO_COMM(sub);
    /* a Cartesian communicator is no graph and no distributed graph */
    int nn, ne, in, outd, w, nb[4];
    CHECK_ERRCLASS(MPI_Graphdims_get(cart, &nn, &ne), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Graph_get(cart, 4, 4, nb, nb), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Graph_neighbors(cart, 0, 4, nb), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Dist_graph_neighbors_count(cart, &in, &outd, &w), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Dist_graph_neighbors(cart, 4, nb, unw, 4, nb, unw), MPI_ERR_TOPOLOGY);
    /* world has no topology at all */
    CHECK_ERRCLASS(MPI_Cartdim_get(MPI_COMM_WORLD, &nd), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Cart_get(MPI_COMM_WORLD, 2, dims, periods, coords), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Cart_rank(MPI_COMM_WORLD, wrapped, &r), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, coords), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
    int remain[2] = {1, 0};
    CHECK_ERRCLASS(MPI_Cart_sub(MPI_COMM_WORLD, remain, &sub), MPI_ERR_TOPOLOGY);
    CHECK_NO_COMM(sub);
    /* the communicator still answers correctly */
    CHECK_MPI(MPI_Cart_coords(cart, rank, 2, coords));
    CHECK_EQ(coords[0], rank);
    still_works(cart, __LINE__);
    /* used after MPI_Comm_free: the stale handle is invalid, not a topology */
    MPI_Comm stale = cart;
    CHECK_MPI(MPI_Comm_free(&cart));
    CHECK_ERRCLASS(MPI_Cartdim_get(stale, &nd), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Cart_shift(stale, 0, 1, &src, &dst), MPI_ERR_COMM);
    int status;
    CHECK_ERRCLASS(MPI_Topo_test(stale, &status), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Topo_test(MPI_COMM_NULL, &status), MPI_ERR_COMM);
    mt_pass("errors_topo: Cartesian queries out of range, on the wrong topology, after free");
}

static void graph_errors(void)
{
    /* a ring over every process; index/edges in the MPI-1 format */
    int index[64], edges[128];
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + 1) % size;
        edges[2 * i + 1] = (i + size - 1) % size;
    }
    MPI_Comm g = MPI_COMM_NULL;
    /* more nodes than processes, negative nnodes */
    CHECK_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &g), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &g), MPI_ERR_ARG);
    /* a decreasing index, a negative first index, an edge to no node */
    int bad_index[64];
    memcpy(bad_index, index, sizeof index);
    bad_index[0] = -1;
    CHECK_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, size, bad_index, edges, 0, &g), MPI_ERR_ARG);
    if (size > 1) {
        memcpy(bad_index, index, sizeof index);
        bad_index[1] = bad_index[0] - 1;
        CHECK_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, size, bad_index, edges, 0, &g), MPI_ERR_ARG);
    }
    int bad_edges[128];
    memcpy(bad_edges, edges, sizeof edges);
    bad_edges[1] = size;
    CHECK_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, size, index, bad_edges, 0, &g), MPI_ERR_ARG);
    bad_edges[1] = -3;
    CHECK_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, size, index, bad_edges, 0, &g), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, size, NULL, edges, 0, &g), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, size, index, NULL, 0, &g), MPI_ERR_ARG);
    CHECK_NO_COMM(g);
    int nr;
    CHECK_ERRCLASS(MPI_Graph_map(MPI_COMM_WORLD, size + 1, index, edges, &nr), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Graph_map(MPI_COMM_WORLD, size, index, bad_edges, &nr), MPI_ERR_ARG);
    still_works(MPI_COMM_WORLD, __LINE__);

    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    CHECK_MPI(MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN));
    int cnt, nb[4], nd, dims[1], periods[1], coords[1], src, dst;
    CHECK_ERRCLASS(MPI_Graph_neighbors_count(g, size, &cnt), MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Graph_neighbors_count(g, -1, &cnt), MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Graph_neighbors(g, size, 4, nb), MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Graph_neighbors(g, 0, -1, nb), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Graph_get(g, -1, 4, nb, nb), MPI_ERR_ARG);
    /* arrays shorter than the graph or the neighbour list are rejected, not
     * filled in part (each rank has 2 neighbours, the graph 2 * size edges) */
    int gi[64], ge[128];
    for (int i = 0; i < 128; i++) ge[i] = -7;
    CHECK_ERRCLASS(MPI_Graph_neighbors(g, rank, 1, ge), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Graph_get(g, size - 1, 2 * size, gi, ge), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Graph_get(g, size, 2 * size - 1, gi, ge), MPI_ERR_ARG);
    CHECK(ge[0] == -7, "a rejected call wrote into edges");
    /* a graph is not Cartesian */
    CHECK_ERRCLASS(MPI_Cartdim_get(g, &nd), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Cart_get(g, 1, dims, periods, coords), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Cart_shift(g, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
    CHECK_MPI(MPI_Graph_neighbors_count(g, rank, &cnt));
    CHECK_EQ(cnt, 2);
    still_works(g, __LINE__);
    MPI_Comm stale = g;
    CHECK_MPI(MPI_Comm_free(&g));
    CHECK_ERRCLASS(MPI_Graph_neighbors_count(stale, 0, &cnt), MPI_ERR_COMM);
    mt_pass("errors_topo: graph constructors with bad index/edges, queries out of range or on the wrong kind");
}

static void dist_graph_errors(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, w1 = 1;
    MPI_Comm d = MPI_COMM_NULL;
    int bad = size, neg = -2, negw = -5;
    /* adjacent: a source or destination that is no rank, a negative weight or degree */
    CHECK_ERRCLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, unw, 1, &next, unw, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, unw, 1, &neg, unw, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, &negw, 1, &next, &w1, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, &w1, 1, &next, &negw, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, &prev, unw, 1, &next, unw, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, NULL, unw, 1, &next, unw, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_ARG);
    /* the general form: n, degrees, ranks and weights checked the same way */
    int deg1 = 1, negdeg = -1;
    CHECK_ERRCLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, -1, &rank, &deg1, &next, unw, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &negdeg, &next, unw, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &bad, &deg1, &next, unw, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &deg1, &bad, unw, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &deg1, &next, &negw, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &deg1, NULL, unw, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &deg1, &next, NULL, MPI_INFO_NULL, 0, &d),
                   MPI_ERR_ARG);
    CHECK_NO_COMM(d);
    still_works(MPI_COMM_WORLD, __LINE__);

    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, &w1, 1, &next, &w1, MPI_INFO_NULL, 0, &d));
    CHECK_MPI(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    int src[2], sw[2], dst[2], dw[2], cnt, nn, ne;
    /* output arrays shorter than the degrees */
    CHECK_ERRCLASS(MPI_Dist_graph_neighbors(d, 0, src, sw, 1, dst, dw), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Dist_graph_neighbors(d, 1, src, sw, 0, dst, dw), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Dist_graph_neighbors(d, -1, src, sw, 1, dst, dw), MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Dist_graph_neighbors(d, 1, NULL, sw, 1, dst, dw), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Dist_graph_neighbors(d, 1, src, NULL, 1, dst, dw), MPI_ERR_ARG);
    /* a distributed graph is neither Cartesian nor a general graph */
    CHECK_ERRCLASS(MPI_Graph_neighbors_count(d, 0, &cnt), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Graphdims_get(d, &nn, &ne), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Cart_shift(d, 0, 1, &nn, &ne), MPI_ERR_TOPOLOGY);
    CHECK_MPI(MPI_Dist_graph_neighbors(d, 1, src, sw, 1, dst, dw));
    CHECK_EQ(src[0], prev);
    CHECK_EQ(dst[0], next);
    still_works(d, __LINE__);
    CHECK_MPI(MPI_Comm_free(&d));
    mt_pass("errors_topo: distributed graphs with invalid ranks, degrees, weights; short query arrays");
}

/* Every neighbourhood collective form on a communicator without a topology. */
static void neighbor_without_topology(void)
{
    int s[8] = {0}, r[8] = {0}, cnt[1] = {1}, disp[1] = {0};
    MPI_Aint adisp[1] = {0};
    MPI_Datatype ty[1] = {MPI_INT};
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Comm w = MPI_COMM_WORLD;
    CHECK_ERRCLASS(MPI_Neighbor_allgather(s, 1, MPI_INT, r, 1, MPI_INT, w), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Neighbor_allgatherv(s, 1, MPI_INT, r, cnt, disp, MPI_INT, w), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, w), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Neighbor_alltoallv(s, cnt, disp, MPI_INT, r, cnt, disp, MPI_INT, w), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Neighbor_alltoallw(s, cnt, adisp, ty, r, cnt, adisp, ty, w), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Ineighbor_allgather(s, 1, MPI_INT, r, 1, MPI_INT, w, &rq), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Ineighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, w, &rq), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Ineighbor_alltoallw(s, cnt, adisp, ty, r, cnt, adisp, ty, w, &rq), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Neighbor_allgather_init(s, 1, MPI_INT, r, 1, MPI_INT, w, MPI_INFO_NULL, &rq), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Neighbor_alltoallv_init(s, cnt, disp, MPI_INT, r, cnt, disp, MPI_INT, w, MPI_INFO_NULL, &rq),
                   MPI_ERR_TOPOLOGY);
    CHECK(rq == MPI_REQUEST_NULL, "a failed neighbourhood collective returned a request");
    /* and on a topology communicator used after free */
    MPI_Comm cart, stale;
    int dims[1] = {size}, periods[1] = {1};
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    stale = cart;
    CHECK_MPI(MPI_Comm_free(&cart));
    CHECK_ERRCLASS(MPI_Neighbor_allgather(s, 1, MPI_INT, r, 1, MPI_INT, stale), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Ineighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, stale, &rq), MPI_ERR_COMM);
    still_works(MPI_COMM_WORLD, __LINE__);
    mt_pass("errors_topo: neighbourhood collectives without a topology or on a freed communicator");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rank = mt_rank(MPI_COMM_WORLD);
    size = mt_size(MPI_COMM_WORLD);
    int *volatile v = MPI_UNWEIGHTED;
    unw = v;
    if (size > 64) {
        mt_pass("errors_topo: SKIP above 64 processes");
        MPI_Finalize();
        return 0;
    }
    mt_errors_return();
    cart_constructors();
    mismatched_arguments();
    cart_queries();
    graph_errors();
    dist_graph_errors();
    neighbor_without_topology();
    MPI_Finalize();
    return 0;
}
