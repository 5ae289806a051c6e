/* A transport that breaks in the middle of a job (LEANMPI_FAULT_SEND_AFTER)
 * must give the program an MPI error class back, or end the job through the
 * fatal handler: never a hang, never a crash.
 *
 * FAULT_CASE picks the traffic: eager (small point-to-point messages),
 * rndv (rendezvous), icoll (a nonblocking collective), comm (communicator
 * creation). The loop runs until a call fails; under MPI_ERRORS_RETURN the
 * rank that saw the error prints its class and aborts (its peers may be
 * waiting for messages that will never come); with FAULT_FATAL set the
 * default MPI_ERRORS_ARE_FATAL ends the job. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ITERATIONS 5000

static int step(const char *mode, int rank, int size, char *sbuf, char *rbuf, int big)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int n = big ? 1 << 20 : 64;
    if (!strcmp(mode, "eager") || !strcmp(mode, "rndv")) {
        MPI_Request r;
        int rc = MPI_Irecv(rbuf, n, MPI_CHAR, left, 7, MPI_COMM_WORLD, &r);
        if (rc != MPI_SUCCESS) return rc;
        rc = MPI_Send(sbuf, n, MPI_CHAR, right, 7, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return rc;
        return MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    if (!strcmp(mode, "icoll")) {
        long in = rank, out = 0;
        MPI_Request r;
        int rc = MPI_Iallreduce(&in, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r);
        if (rc != MPI_SUCCESS) return rc;
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && out != (long)size * (size - 1) / 2) {
            printf("FAIL iallreduce gave %ld\n", out);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        return rc;
    }
    if (!strcmp(mode, "comm")) {
        MPI_Comm dup;
        int rc = MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        if (rc != MPI_SUCCESS) return rc;
        return MPI_Comm_free(&dup);
    }
    printf("FAIL unknown FAULT_CASE %s\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = getenv("FAULT_CASE");
    if (!mode) mode = "eager";
    if (!getenv("FAULT_FATAL")) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int big = !strcmp(mode, "rndv");
    char *sbuf = calloc(1, 1 << 20), *rbuf = calloc(1, 1 << 20);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < MAX_ITERATIONS && rc == MPI_SUCCESS; i++) rc = step(mode, rank, size, sbuf, rbuf, big);
    if (rc == MPI_SUCCESS) {
        printf("FAIL rank %d: no error in %d iterations of %s traffic\n", rank, MAX_ITERATIONS, mode);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int cls = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
    printf("rank %d: ERROR-CLASS %d (%s) from %s traffic\n", rank, cls, text, mode);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 0;
}
