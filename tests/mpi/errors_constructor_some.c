/* LMTEST-LEANMPI-ONLY */
/* A collective communicator constructor where only one process passes
 * invalid arguments, under MPI_ERRORS_RETURN: that process gets its error
 * and every other process gets an error too, instead of waiting for it
 * forever; the parent still works afterwards. Both kinds of checks are
 * tried: those of the entry points (handles, pointers, color) and those of
 * the constructors themselves (grid, graph, split type), on intra- and on
 * intercommunicators, where the other side must fail too. (The peers differ
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
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* errors of the group constructors */
    int bad = rank == size - 1;                                /* the one process that gets it wrong */
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

    /* intercommunicators: the two halves of the world; the side of the
     * process that gets it wrong tells the other side through the leaders */
    if (size >= 2) {
        int half = rank < size / 2, lrank;
        MPI_Comm local, inter, d = MPI_COMM_NULL;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, half, rank, &local));
        MPI_Comm_rank(local, &lrank);
        int remote_leader = half ? size / 2 : 0;
        MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
        /* at 2 processes the one that gets it wrong is its side's leader */
        failed_everywhere(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 7, bad ? NULL : &d),
                          "Intercomm_create, newintercomm NULL");
        if (size >= 4) /* not the leader: a local_leader that is no rank of local */
            failed_everywhere(MPI_Intercomm_create(local, bad ? 99 : 0, MPI_COMM_WORLD, remote_leader, 7, &d),
                              "Intercomm_create, local_leader out of range");
        CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 7, &inter));
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        failed_everywhere(MPI_Comm_dup(inter, bad ? NULL : &d), "Comm_dup of an intercommunicator, newcomm NULL");
        failed_everywhere(MPI_Comm_split(inter, bad ? -5 : 0, rank, &d),
                          "Comm_split of an intercommunicator, color -5");
        MPI_Group lg;
        MPI_Comm_group(inter, &lg);
        failed_everywhere(MPI_Comm_create(inter, bad ? MPI_GROUP_NULL : lg, &d),
                          "Comm_create on an intercommunicator, group NULL");
        failed_everywhere(MPI_Intercomm_merge(inter, half, bad ? NULL : &d), "Intercomm_merge, newintracomm NULL");
        req = MPI_REQUEST_NULL;
        rc = MPI_Comm_idup(inter, &d, bad ? NULL : &req);
        if (!bad && rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE); /* failed at the call, or later */
        failed_everywhere(rc, "Comm_idup of an intercommunicator, request NULL");
        if (size >= 4) {
            MPI_Group wg, rg;
            MPI_Comm_group(MPI_COMM_WORLD, &wg);
            MPI_Comm_remote_group(inter, &rg);
            failed_everywhere(MPI_Intercomm_create_from_groups(lg, bad ? 99 : 0, rg, 0, "errors_constructor_some",
                                                               MPI_INFO_NULL, MPI_ERRORS_RETURN, &d),
                              "Intercomm_create_from_groups, local_leader out of range");
            MPI_Group_free(&wg);
            MPI_Group_free(&rg);
        }
        MPI_Group_free(&lg);
        /* the intercommunicator still works */
        CHECK_MPI(MPI_Intercomm_merge(inter, half, &d));
        CHECK_MPI(MPI_Barrier(d));
        CHECK_MPI(MPI_Comm_free(&d));
        CHECK_MPI(MPI_Comm_free(&inter));
        CHECK_MPI(MPI_Comm_free(&local));
    }

    /* the parent still works, and a valid constructor still does */
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Barrier(c));
    CHECK_MPI(MPI_Comm_free(&c));
    if (rank == 0) printf("PASS errors_constructor_some\n");
    MPI_Finalize();
    return 0;
}
