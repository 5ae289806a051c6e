/* A failed MPI_Init unwinds exactly the steps it had started
 * (LEANMPI_FAULT_INIT_STEP makes one step fail once): the call returns an
 * error class, MPI is not initialized, and a second MPI_Init then starts
 * every step again and the job communicates normally. A step left half
 * started, or stopped twice, shows up here (and in the sanitized tree). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    const char *step = getenv("LEANMPI_FAULT_INIT_STEP");
    int rc = MPI_Init(&argc, &argv);
    if (step && *step && strcmp(step, "0")) {
        if (rc == MPI_SUCCESS) {
            printf("FAIL MPI_Init succeeded although step %s was made to fail\n", step);
            return 1;
        }
        int cls = -1, flag = 1;
        MPI_Error_class(rc, &cls);
        MPI_Initialized(&flag);
        if (cls != MPI_ERR_OTHER || flag) {
            printf("FAIL after the failed MPI_Init: class %d, MPI_Initialized %d\n", cls, flag);
            return 1;
        }
        rc = MPI_Init(&argc, &argv);
    }
    if (rc != MPI_SUCCESS) {
        printf("FAIL MPI_Init returned %d\n", rc);
        return 1;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* point-to-point, a collective and a new communicator after the retry */
    int token = rank, got = -1;
    CHECK_MPI(MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 3, &got, 1, MPI_INT, (rank + size - 1) % size, 3,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == (rank + size - 1) % size, "ring token %d", got);
    long sum = 0, mine = rank + 1;
    CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == (long)size * (size + 1) / 2, "allreduce %ld", sum);
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_MPI(MPI_Barrier(dup));
    CHECK_MPI(MPI_Comm_free(&dup));
    if (rank == 0) printf("PASS init_unwind (step %s)\n", step ? step : "none");
    MPI_Finalize();
    return 0;
}
