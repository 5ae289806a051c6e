/* User error classes, codes and strings added and removed over many rounds:
 * a round (a class, two codes and a string, then all of it removed) costs
 * the same however many came before, the codes of removed entries are
 * invalid afterwards, and MPI_LASTUSEDCODE stays bounded. */
#include "mpitest.h"
#include <time.h>

#define ROUNDS 100000

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* a class that lives throughout, so that removal must look past it */
    int keep, keep_code;
    CHECK_MPI(MPI_Add_error_class(&keep));
    CHECK_MPI(MPI_Add_error_code(keep, &keep_code));
    int *last, flag;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    int first_last = *last;
    double t0 = now();
    for (int round = 0; round < ROUNDS; round++) {
        int cls, c1, c2, ec;
        CHECK_MPI(MPI_Add_error_class(&cls));
        CHECK_MPI(MPI_Add_error_code(cls, &c1));
        CHECK_MPI(MPI_Add_error_code(MPI_ERR_OTHER, &c2));
        CHECK_MPI(MPI_Add_error_string(c1, "first code"));
        CHECK_MPI(MPI_Error_class(c1, &ec));
        CHECK_EQ(ec, cls);
        /* a class with a code left cannot go; a code with a string cannot */
        CHECK_ERRCLASS(MPI_Remove_error_class(cls), MPI_ERR_ARG);
        CHECK_ERRCLASS(MPI_Remove_error_code(c1), MPI_ERR_ARG);
        CHECK_MPI(MPI_Remove_error_string(c1));
        CHECK_MPI(MPI_Remove_error_code(c1));
        CHECK_MPI(MPI_Remove_error_code(c2));
        CHECK_MPI(MPI_Remove_error_class(cls));
        CHECK_ERRCLASS(MPI_Error_class(c1, &ec), MPI_ERR_ARG);
        CHECK_ERRCLASS(MPI_Remove_error_class(cls), MPI_ERR_ARG);
    }
    double total = now() - t0;
    /* no timing check: a cost that grew with the rounds made (a scan of
     * every entry ever added) runs past the test's time limit, and the
     * codes of removed entries being reused keeps the table bounded */
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(*last <= first_last + 3, "MPI_LASTUSEDCODE grew from %d to %d", first_last, *last);
    int ec;
    CHECK_MPI(MPI_Error_class(keep_code, &ec));
    CHECK_EQ(ec, keep);
    CHECK_MPI(MPI_Remove_error_code(keep_code));
    CHECK_MPI(MPI_Remove_error_class(keep));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS error_class_rounds (%d rounds in %.3f s)\n", ROUNDS, total);
    MPI_Finalize();
    return 0;
}
