/* Graph and distributed graph topologies: construction, the queries, ranks
 * beyond the graph, dup keeping the topology, neighbours and weights from
 * both distributed constructors (edges given by their own process or by
 * another one), and the error classes. */
#include "mpitest.h"

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are sentinel addresses: read through
 * a volatile so that compilers do not warn about reading arrays at them. */
static int *sentinel(int *p)
{
    int *volatile v = p;
    return v;
}

static int mod(int a, int n) { return ((a % n) + n) % n; }

static void test_graph(void)
{
    int size = mt_size(MPI_COMM_WORLD), me = mt_rank(MPI_COMM_WORLD);
    /* a ring over all processes: node i is joined to i-1 and i+1 */
    int *index = malloc(sizeof(int) * size), *edges = malloc(sizeof(int) * 2 * size);
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = mod(i - 1, size);
        edges[2 * i + 1] = mod(i + 1, size);
    }
    MPI_Comm g;
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    CHECK(g != MPI_COMM_NULL, "every rank is a node");
    int status, nn, ne;
    CHECK_MPI(MPI_Topo_test(g, &status));
    CHECK_EQ(status, MPI_GRAPH);
    CHECK_MPI(MPI_Graphdims_get(g, &nn, &ne));
    CHECK_EQ(nn, size);
    CHECK_EQ(ne, 2 * size);
    int *gi = malloc(sizeof(int) * size), *ge = malloc(sizeof(int) * 2 * size);
    CHECK_MPI(MPI_Graph_get(g, size, 2 * size, gi, ge));
    for (int i = 0; i < size; i++) CHECK_EQ(gi[i], index[i]);
    for (int i = 0; i < 2 * size; i++) CHECK_EQ(ge[i], edges[i]);
    for (int r = 0; r < size; r++) {
        int cnt, nb[2];
        CHECK_MPI(MPI_Graph_neighbors_count(g, r, &cnt));
        CHECK_EQ(cnt, 2);
        CHECK_MPI(MPI_Graph_neighbors(g, r, 2, nb));
        CHECK_EQ(nb[0], mod(r - 1, size));
        CHECK_EQ(nb[1], mod(r + 1, size));
    }
    int nr;
    CHECK_MPI(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &nr));
    CHECK_EQ(nr, me);

    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(g, &dup));
    CHECK_MPI(MPI_Topo_test(dup, &status));
    CHECK_EQ(status, MPI_GRAPH);
    CHECK_MPI(MPI_Graphdims_get(dup, &nn, &ne));
    CHECK(nn == size && ne == 2 * size, "dup's graph");
    CHECK_MPI(MPI_Comm_free(&dup));

    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cnt, nd;
#ifdef LEANMPI
    /* peers differ here: Open MPI does not check the rank */
    CHECK_ERRCLASS(MPI_Graph_neighbors_count(g, size, &cnt), MPI_ERR_RANK);
#endif
    CHECK_ERRCLASS(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &cnt), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne), MPI_ERR_TOPOLOGY);
    CHECK_ERRCLASS(MPI_Cartdim_get(g, &nd), MPI_ERR_TOPOLOGY);
    int in, out, w;
    CHECK_ERRCLASS(MPI_Dist_graph_neighbors_count(g, &in, &out, &w), MPI_ERR_TOPOLOGY);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK_MPI(MPI_Comm_free(&g));

    /* a graph over all but the last process: that one gets MPI_COMM_NULL */
    if (size > 1) {
        int n = size - 1;
        int *ix = malloc(sizeof(int) * n), *ed = malloc(sizeof(int) * n);
        for (int i = 0; i < n; i++) {
            ix[i] = i + 1;
            ed[i] = mod(i + 1, n);
        }
        CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, n, ix, ed, 0, &g));
        if (me >= n) {
            CHECK(g == MPI_COMM_NULL, "rank %d is beyond the graph", me);
        } else {
            CHECK_EQ(mt_size(g), n);
            int nb = -1;
            CHECK_MPI(MPI_Graph_neighbors(g, me, 1, &nb));
            CHECK_EQ(nb, mod(me + 1, n));
            CHECK_MPI(MPI_Comm_free(&g));
        }
        CHECK_MPI(MPI_Graph_map(MPI_COMM_WORLD, n, ix, ed, &nr));
        if (me < n) CHECK_EQ(nr, me);
        free(ix);
        free(ed);
    }
    free(index);
    free(edges);
    free(gi);
    free(ge);
    mt_pass("graph");
}

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Neighbours (with weights) as a sorted multiset, since Dist_graph_create
 * leaves their order to the implementation. */
static void check_set(int n, const int *got, const int *gotw, const int *want, const int *wantw, const char *what)
{
    int *a = malloc(sizeof(int) * 2 * (n + 1)), *b = malloc(sizeof(int) * 2 * (n + 1));
    for (int i = 0; i < n; i++) {
        a[2 * i] = got[i];
        a[2 * i + 1] = gotw ? gotw[i] : 0;
        b[2 * i] = want[i];
        b[2 * i + 1] = wantw ? wantw[i] : 0;
    }
    qsort(a, n, 2 * sizeof(int), cmp_pair);
    qsort(b, n, 2 * sizeof(int), cmp_pair);
    for (int i = 0; i < 2 * n; i++) CHECK(a[i] == b[i], "%s: entry %d is %d, expected %d", what, i / 2, a[i], b[i]);
    free(a);
    free(b);
}

static void test_dist_adjacent(void)
{
    int size = mt_size(MPI_COMM_WORLD), me = mt_rank(MPI_COMM_WORLD);
    /* from i-1 and i-2, to i+1 and i+2; the weight of s -> d is 100 s + d */
    int src[2] = {mod(me - 1, size), mod(me - 2, size)}, dst[2] = {mod(me + 1, size), mod(me + 2, size)};
    int sw[2] = {100 * src[0] + me, 100 * src[1] + me}, dw[2] = {100 * me + dst[0], 100 * me + dst[1]};
    MPI_Comm d;
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &d));
    int status, in, out, weighted;
    CHECK_MPI(MPI_Topo_test(d, &status));
    CHECK_EQ(status, MPI_DIST_GRAPH);
    CHECK_MPI(MPI_Dist_graph_neighbors_count(d, &in, &out, &weighted));
    CHECK_EQ(in, 2);
    CHECK_EQ(out, 2);
    CHECK(weighted, "weights were given");
    int gs[2], gsw[2], gd[2], gdw[2];
    CHECK_MPI(MPI_Dist_graph_neighbors(d, 2, gs, gsw, 2, gd, gdw));
    /* the adjacent constructor keeps the order given */
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(gs[i], src[i]);
        CHECK_EQ(gsw[i], sw[i]);
        CHECK_EQ(gd[i], dst[i]);
        CHECK_EQ(gdw[i], dw[i]);
    }
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(d, &dup));
    CHECK_MPI(MPI_Dist_graph_neighbors_count(dup, &in, &out, &weighted));
    CHECK(in == 2 && out == 2 && weighted, "dup's graph");
    CHECK_MPI(MPI_Comm_free(&dup));
    CHECK_MPI(MPI_Comm_free(&d));

    /* unweighted, and a process with no edges at all */
    int none = me == 0, n_in = none ? 0 : 1, n_out = none ? 0 : 1;
    int from = 0, to = 0;
    int *unw = sentinel(MPI_UNWEIGHTED);
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n_in, &from, unw, n_out, &to, unw, MPI_INFO_NULL, 1, &d));
    CHECK_MPI(MPI_Dist_graph_neighbors_count(d, &in, &out, &weighted));
    CHECK_EQ(in, n_in);
    CHECK_EQ(out, n_out);
    CHECK(!weighted, "MPI_UNWEIGHTED was given");
    CHECK_MPI(MPI_Comm_free(&d));
    mt_pass("dist graph adjacent");
}

static void test_dist_create(void)
{
    int size = mt_size(MPI_COMM_WORLD), me = mt_rank(MPI_COMM_WORLD);
    /* rank 0 describes the whole graph: s -> s+1 and s -> s+3, weight 100 s + d */
    int n = me == 0 ? size : 0;
    int *sources = malloc(sizeof(int) * (size + 1)), *degrees = malloc(sizeof(int) * (size + 1));
    int *dests = malloc(sizeof(int) * (2 * size + 1)), *weights = malloc(sizeof(int) * (2 * size + 1));
    for (int s = 0; s < size; s++) {
        sources[s] = s;
        degrees[s] = 2;
        dests[2 * s] = mod(s + 1, size);
        dests[2 * s + 1] = mod(s + 3, size);
        weights[2 * s] = 100 * s + dests[2 * s];
        weights[2 * s + 1] = 100 * s + dests[2 * s + 1];
    }
    MPI_Comm d;
    CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests,
                                    n ? weights : sentinel(MPI_WEIGHTS_EMPTY), MPI_INFO_NULL, 0, &d));
    int in, out, weighted;
    CHECK_MPI(MPI_Dist_graph_neighbors_count(d, &in, &out, &weighted));
    CHECK_EQ(in, 2);
    CHECK_EQ(out, 2);
    CHECK(weighted, "weights were given");
    int gs[2], gsw[2], gd[2], gdw[2];
    CHECK_MPI(MPI_Dist_graph_neighbors(d, 2, gs, gsw, 2, gd, gdw));
    int ws[2] = {mod(me - 1, size), mod(me - 3, size)}, wsw[2] = {100 * ws[0] + me, 100 * ws[1] + me};
    int wd[2] = {mod(me + 1, size), mod(me + 3, size)}, wdw[2] = {100 * me + wd[0], 100 * me + wd[1]};
    check_set(2, gs, gsw, ws, wsw, "sources");
    check_set(2, gd, gdw, wd, wdw, "destinations");
    CHECK_MPI(MPI_Comm_free(&d));

    /* each process gives the edge into itself: (i+1) -> i, unweighted */
    int s = mod(me + 1, size), deg = 1;
    CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &s, &deg, &me, sentinel(MPI_UNWEIGHTED), MPI_INFO_NULL, 0, &d));
    CHECK_MPI(MPI_Dist_graph_neighbors_count(d, &in, &out, &weighted));
    CHECK_EQ(in, 1);
    CHECK_EQ(out, 1);
    CHECK(!weighted, "MPI_UNWEIGHTED was given");
    CHECK_MPI(MPI_Dist_graph_neighbors(d, 1, gs, sentinel(MPI_UNWEIGHTED), 1, gd, sentinel(MPI_UNWEIGHTED)));
    CHECK_EQ(gs[0], mod(me + 1, size));
    CHECK_EQ(gd[0], mod(me - 1, size));
    CHECK_MPI(MPI_Comm_free(&d));

#ifdef LEANMPI
    /* peers differ here: MPICH does not check the ranks */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad = size;
    CHECK_ERRCLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, sentinel(MPI_UNWEIGHTED), 0, &bad,
                                                  sentinel(MPI_UNWEIGHTED), MPI_INFO_NULL, 0, &d),
                   MPI_ERR_RANK);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
#endif
    free(sources);
    free(degrees);
    free(dests);
    free(weights);
    mt_pass("dist graph create");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_graph();
    test_dist_adjacent();
    test_dist_create();
    MPI_Finalize();
    return 0;
}
