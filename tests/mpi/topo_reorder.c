/* Topology constructors with reorder = 1: the new ranks are a permutation
 * that keeps the topology consistent, and across hosts they put no more
 * edges between hosts than the rank order does (fewer where the rank order
 * is poor: a 2 x (n/2) grid on 2 hosts, and a graph that pairs rank i with
 * rank i + n/2, general and distributed in both forms, where each vertex
 * keeps its neighbours and weights). On one host the ranks keep their order. Hosts are told
 * apart by MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). */
#include "mpitest.h"

static int *host_by_rank(MPI_Comm comm)
{
    MPI_Comm node;
    int wrank, size, mine;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    /* a host's name: the lowest world rank on it */
    MPI_Allreduce(&wrank, &mine, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    MPI_Comm_size(comm, &size);
    int *host = malloc((size_t)size * sizeof(int));
    MPI_Allgather(&mine, 1, MPI_INT, host, 1, MPI_INT, comm);
    return host;
}

/* edges (counted from both ends) whose ends are on different hosts */
static int cut_of_cart(MPI_Comm cart)
{
    int rank, ndims, c = 0;
    MPI_Comm_rank(cart, &rank);
    MPI_Cartdim_get(cart, &ndims);
    int *host = host_by_rank(cart);
    for (int d = 0; d < ndims; d++) {
        int lo, hi;
        MPI_Cart_shift(cart, d, 1, &lo, &hi);
        c += lo != MPI_PROC_NULL && host[lo] != host[rank];
        c += hi != MPI_PROC_NULL && host[hi] != host[rank];
    }
    free(host);
    int total;
    MPI_Allreduce(&c, &total, 1, MPI_INT, MPI_SUM, cart);
    return total;
}

static int cut_of_graph(MPI_Comm g)
{
    int rank, nn, c = 0;
    MPI_Comm_rank(g, &rank);
    MPI_Graph_neighbors_count(g, rank, &nn);
    int *nb = malloc((size_t)(nn ? nn : 1) * sizeof(int)), *host = host_by_rank(g);
    MPI_Graph_neighbors(g, rank, nn, nb);
    for (int i = 0; i < nn; i++) c += host[nb[i]] != host[rank];
    free(nb);
    free(host);
    int total;
    MPI_Allreduce(&c, &total, 1, MPI_INT, MPI_SUM, g);
    return total;
}

/* A distributed graph of the pairs (vertex v with v + n/2, both ways,
 * weight v + 1 on v's out-edge): the vertex's neighbours and weights as
 * declared, a neighbourhood exchange that reaches the partner, and the
 * edge ends between hosts. */
static int check_pairs_dist(MPI_Comm g, int n)
{
    int me, in, out, weighted;
    MPI_Comm_rank(g, &me);
    MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted);
    int partner = (me + n / 2) % n;
    CHECK(in == 1 && out == 1 && weighted, "vertex %d: %d in, %d out, weighted %d (1, 1, 1 expected)", me, in, out,
          weighted);
    int src, dst, sw, dw;
    MPI_Dist_graph_neighbors(g, 1, &src, &sw, 1, &dst, &dw);
    CHECK(src == partner && dst == partner, "vertex %d: neighbours %d and %d, not %d", me, src, dst, partner);
    CHECK(sw == partner + 1 && dw == me + 1, "vertex %d: weights %d in, %d out (%d, %d expected)", me, sw, dw,
          partner + 1, me + 1);
    int got = -1;
    MPI_Neighbor_alltoall(&me, 1, MPI_INT, &got, 1, MPI_INT, g);
    CHECK(got == partner, "vertex %d got %d from its source, not %d", me, got, partner);
    int *host = host_by_rank(g), c = host[partner] != host[me], total;
    free(host);
    MPI_Allreduce(&c, &total, 1, MPI_INT, MPI_SUM, g);
    return total;
}

static void pairs_dist(int rank, int n, int hosts)
{
    int partner = (rank + n / 2) % n, w = rank + 1, pw = partner + 1;
    const char *form[2] = {"create", "adjacent"};
    for (int adjacent = 0; adjacent < 2; adjacent++) {
        MPI_Comm plain, moved;
        for (int reorder = 0; reorder < 2; reorder++) {
            MPI_Comm *g = reorder ? &moved : &plain;
            if (adjacent) {
                MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &partner, &pw, 1, &partner, &w, MPI_INFO_NULL,
                                               reorder, g);
            } else {
                int one = 1;
                MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &partner, &w, MPI_INFO_NULL, reorder, g);
            }
        }
        int before = check_pairs_dist(plain, n), after = check_pairs_dist(moved, n), me;
        MPI_Comm_rank(moved, &me);
        CHECK(!(after > before), "reordered dist graph (%s) cuts %d edges, the rank order %d", form[adjacent], after,
              before);
        CHECK(!(hosts == 2 && n == 8 && after != 0), "the pairs dist graph (%s) on 2 hosts of 4 still cuts %d",
              form[adjacent], after);
        CHECK(!(hosts == 1 && me != rank), "on one host rank %d became %d (%s)", rank, me, form[adjacent]);
        if (rank == 0)
            printf("pairs dist graph (%s) on %d hosts: %d edge ends between hosts, %d in rank order\n", form[adjacent],
                   hosts, after, before);
        MPI_Comm_free(&plain);
        MPI_Comm_free(&moved);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int *host = host_by_rank(MPI_COMM_WORLD), hosts = 0;
    for (int r = 0; r < n; r++) hosts += host[r] == r;
    free(host);
    if (n % 2 == 0 && n >= 4) {
        int dims[2] = {2, n / 2}, periods[2] = {0, 0};
        MPI_Comm plain, moved;
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &plain);
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &moved);
        /* coordinates and ranks agree in the reordered grid */
        int me, coords[2], back;
        MPI_Comm_rank(moved, &me);
        MPI_Cart_coords(moved, me, 2, coords);
        MPI_Cart_rank(moved, coords, &back);
        CHECK(!(back != me), "Cart_rank(Cart_coords(%d)) = %d", me, back);
        int before = cut_of_cart(plain), after = cut_of_cart(moved);
        CHECK(!(after > before), "reordered grid cuts %d edges, the rank order %d", after, before);
        CHECK(!(hosts == 2 && n == 8 && !(after < before)),
              "on 2 hosts of 4 the reordered 2x4 grid still cuts %d edges (rank order %d)", after, before);
        CHECK(!(hosts == 1 && me != rank), "on one host rank %d became %d", rank, me);
        if (rank == 0)
            printf("grid 2x%d on %d hosts: %d edge ends between hosts, %d in rank order\n", n / 2, hosts, after,
                   before);
        MPI_Comm_free(&plain);
        MPI_Comm_free(&moved);

        /* rank i with rank i + n/2 */
        int *index = malloc((size_t)n * sizeof(int)), *edges = malloc((size_t)n * sizeof(int));
        for (int v = 0; v < n; v++) {
            index[v] = v + 1;
            edges[v] = (v + n / 2) % n;
        }
        MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &plain);
        MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 1, &moved);
        before = cut_of_graph(plain);
        after = cut_of_graph(moved);
        CHECK(!(after > before), "reordered graph cuts %d edges, the rank order %d", after, before);
        CHECK(!(hosts == 2 && n == 8 && after != 0), "the pairs graph on 2 hosts of 4 still cuts %d edge ends", after);
        int nn;
        MPI_Comm_rank(moved, &me);
        MPI_Graph_neighbors_count(moved, me, &nn);
        CHECK(!(nn != 1), "vertex %d has %d neighbours, not 1", me, nn);
        if (rank == 0)
            printf("pairs graph on %d hosts: %d edge ends between hosts, %d in rank order\n", hosts, after, before);
        MPI_Comm_free(&plain);
        MPI_Comm_free(&moved);
        free(index);
        free(edges);
        pairs_dist(rank, n, hosts);
    }
    if (rank == 0) printf("PASS topo_reorder\n");
    MPI_Finalize();
    return 0;
}
