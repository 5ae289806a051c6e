/* Every rank says hello; rank 0 collects the names in rank order. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, len;
    char name[MPI_MAX_PROCESSOR_NAME], version[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    MPI_Get_library_version(version, &len);
    if (rank == 0) {
        printf("hello from rank 0 of %d on %s (%s)\n", size, name, version);
        for (int r = 1; r < size; r++) {
            char msg[MPI_MAX_PROCESSOR_NAME + 64];
            MPI_Recv(msg, sizeof msg, MPI_CHAR, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            printf("%s\n", msg);
        }
    } else {
        char msg[MPI_MAX_PROCESSOR_NAME + 64];
        int n = snprintf(msg, sizeof msg, "hello from rank %d of %d on %s", rank, size, name);
        MPI_Send(msg, n + 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
