/* MPI_Init_thread with a level that is none of the four is an error
 * (MPI_ERR_ARG) that starts nothing; a valid level afterwards starts MPI
 * and is granted as asked. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int provided = -1, flag = 1, cls = -1;
    int bad[] = {MPI_THREAD_MULTIPLE + 1, MPI_THREAD_SINGLE - 1, 42, -1000};
    for (int i = 0; i < 4; i++) {
        int rc = MPI_Init_thread(&argc, &argv, bad[i], &provided);
        CHECK(rc != MPI_SUCCESS, "MPI_Init_thread(required = %d) succeeded with provided = %d", bad[i], provided);
        CHECK_MPI(MPI_Error_class(rc, &cls));
        CHECK_EQ(cls, MPI_ERR_ARG);
        CHECK_MPI(MPI_Initialized(&flag));
        CHECK(!flag, "a failed MPI_Init_thread left MPI initialized");
    }
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided));
    CHECK_EQ(provided, MPI_THREAD_SERIALIZED);
    int q;
    CHECK_MPI(MPI_Query_thread(&q));
    CHECK_EQ(q, MPI_THREAD_SERIALIZED);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS init_thread_level\n");
    MPI_Finalize();
    return 0;
}
