/* A job whose MPI_COMM_WORLD reports more ranks than run (mpirun
 * --simulate-world-size, used to measure memory at a million ranks): the
 * reported size, point-to-point among the ranks that run, MPI_ERR_RANK for
 * a message to or from a rank that does not, and MPI_ERR_COMM for a
 * collective over a communicator that includes one — never a hang. A
 * communicator of running ranks only works normally. The expected sizes
 * come from the environment (LM_TEST_WORLD_SIZE, LM_TEST_REAL_RANKS). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *ws = getenv("LM_TEST_WORLD_SIZE"), *rr = getenv("LM_TEST_REAL_RANKS");
    if (!ws || !rr) {
        if (mt_world_rank() == 0) printf("SKIP simulated_world: run it through its CTest registration\n");
        MPI_Finalize();
        return 0;
    }
    int want = atoi(ws), real = atoi(rr), rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_EQ(size, want);
    CHECK(rank < real, "rank %d runs", rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* a ring among the ranks that run */
    int token = rank, got = -1;
    CHECK_MPI(MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % real, 7, &got, 1, MPI_INT, (rank + real - 1) % real, 7,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ(got, (rank + real - 1) % real);

    /* ranks that do not run: errors, at once */
    int x = 0;
    MPI_Request req;
    CHECK_ERRCLASS(MPI_Send(&x, 1, MPI_INT, real, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Recv(&x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Isend(&x, 1, MPI_INT, size / 2, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Barrier(MPI_COMM_WORLD), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Ibarrier(MPI_COMM_WORLD, &req), MPI_ERR_COMM);

    /* the running ranks as a group of their own: a normal communicator */
    MPI_Group world, live;
    int range[1][3] = {{0, real - 1, 1}};
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_MPI(MPI_Group_range_incl(world, 1, range, &live));
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, live, 3, &c));
    int sum = 0, one = 1;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK_EQ(sum, real);
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK_MPI(MPI_Group_free(&live));
    CHECK_MPI(MPI_Group_free(&world));
    mt_pass("simulated_world: reported size, traffic among running ranks, errors for the others");
    MPI_Finalize();
    return 0;
}
