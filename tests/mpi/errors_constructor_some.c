/* LMTEST-LEANMPI-ONLY */
/* A collective communicator constructor where only one process passes
 * invalid arguments, under MPI_ERRORS_RETURN: that process gets its error
 * and every other process gets an error too, instead of waiting for it
 * forever; the parent still works afterwards. Both kinds of checks are
 * tried: those of the entry points (handles, pointers, color) and those of
 * the constructors themselves (grid, graph, split type). (The peers differ
 * here: Open MPI and MPICH leave the others waiting in some of these.) */
#include "mpitest.h"

static int rank, size;

/* rc is the outcome of the call on this rank: an error everywhere. */
static void failed_everywhere(int rc, const char *what)
{
    CHECK(rc != MPI_SUCCESS, "%s succeeded on rank %d", what, rank);
    int all = 0, mine = 1;
    CHECK_MPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_EQ(all, size);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad = rank == size - 1; /* the one process that gets it wrong */
    MPI_Comm c = MPI_COMM_NULL;

    failed_everywhere(MPI_Comm_split(MPI_COMM_WORLD, bad ? -5 : 0, rank, &c), "Comm_split, a negative color");
    failed_everywhere(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, bad ? NULL : &c), "Comm_split, newcomm NULL");
    failed_everywhere(MPI_Comm_dup(MPI_COMM_WORLD, bad ? NULL : &c), "Comm_dup, newcomm NULL");
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    failed_everywhere(MPI_Comm_create(MPI_COMM_WORLD, bad ? MPI_GROUP_NULL : world, &c), "Comm_create, group NULL");
    MPI_Group_free(&world);
    failed_everywhere(MPI_Comm_split_type(MPI_COMM_WORLD, bad ? 12345 : MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &c),
                      "Comm_split_type, an unknown split type");
    int dims[1] = {bad ? 0 : size}, periods[1] = {0};
    failed_everywhere(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c), "Cart_create, a zero dimension");
    int index[1] = {1}, edges[1] = {bad ? 7 : 0};
    failed_everywhere(MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &c), "Graph_create, an edge to no node");
    int none[1] = {0}, w[1] = {1};
    failed_everywhere(
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, bad ? -1 : 0, none, w, 0, none, w, MPI_INFO_NULL, 0, &c),
        "Dist_graph_create_adjacent, a negative degree");
    /* a nonblocking duplicate: the others' requests fail */
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Comm_idup(MPI_COMM_WORLD, &c, bad ? NULL : &req);
    if (!bad) {
        CHECK_MPI(rc);
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    failed_everywhere(rc, "Comm_idup, request NULL");
    /* a Cartesian subgrid with remain_dims NULL on one process */
    int d2[2] = {size, 1}, p2[2] = {0, 0}, remain[2] = {1, 0};
    MPI_Comm cart;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &cart));
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    rc = MPI_Cart_sub(cart, bad ? NULL : remain, &c);
    CHECK(rc != MPI_SUCCESS, "Cart_sub succeeded on rank %d", rank);
    CHECK_MPI(MPI_Comm_free(&cart));
    failed_everywhere(MPI_ERR_OTHER, "(after Cart_sub)");

    /* the parent still works, and a valid constructor still does */
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Barrier(c));
    CHECK_MPI(MPI_Comm_free(&c));
    if (rank == 0) printf("PASS errors_constructor_some\n");
    MPI_Finalize();
    return 0;
}
